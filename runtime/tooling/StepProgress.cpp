//===- StepProgress.cpp - A line and a log record per step ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/StepProgress.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/LossCurve.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>

namespace dtensor::tooling {

std::string StepProgress::open(const std::vector<RunTensor> &tensors,
                               const RunOptions &options, const RunData *data,
                               int rank) {
  this->data = data;
  steps = options.warmup + options.iters;
  firstBatch = options.dataStart;
  print = data && !options.quiet && rank == 0;
  // Every rank fetches the scalars with rank 0, which prints or logs them.
  active = data || !options.log.empty() || !options.plot.empty() ||
           !options.evalData.empty();
  if (!active)
    return "";
  for (const RunTensor &tensor : tensors)
    if (tensor.role == DTENSOR_OUTPUT && isFloatingPoint(tensor.dtype) &&
        tensor.numElements() == 1)
      scalars.push_back(&tensor);
  if (!options.plot.empty() && !scalars.empty()) {
    plotted = 0;
    for (size_t i = 0; i < scalars.size(); ++i)
      if (scalars[i]->name == "loss")
        plotted = static_cast<int>(i);
  }
  if (rank != 0 || options.log.empty())
    return "";
  log.reset(std::fopen(options.log.c_str(), "w"));
  if (!log)
    return "--log: cannot create " + options.log + ": " + std::strerror(errno);
  return "";
}

std::string StepProgress::record(
    int step, uint64_t batch, double ms, double tokensPerSecond,
    const std::vector<std::pair<std::string, double>> &scalars) {
  nlohmann::ordered_json line;
  line["step"] = step;
  line["batch"] = batch;
  line["ms"] = ms;
  if (tokensPerSecond > 0)
    line["tokens_per_s"] = tokensPerSecond;
  for (const auto &[name, value] : scalars)
    line[name] = value;
  return line.dump();
}

dtensor_status StepProgress::report(dtensor_program *program,
                                    const RunRanks &ranks, int step,
                                    double ms) {
  if (!active)
    return DTENSOR_OK;
  std::vector<std::pair<std::string, double>> values;
  for (const RunTensor *tensor : scalars) {
    std::vector<uint8_t> value;
    if (dtensor_status status = fetchGlobal(program, ranks, *tensor, value))
      return status;
    if (ranks.rank() == 0)
      values.emplace_back(tensor->name,
                          elementAsDouble(value.data(), tensor->dtype, 0));
  }
  if (ranks.rank() != 0)
    return DTENSOR_OK;
  if (plotted >= 0)
    curve.emplace_back(double(step + 1), values[plotted].second);
  double tokensPerSecond =
      data && ms > 0 ? double(data->batchTokens()) * 1000.0 / ms : 0.0;
  uint64_t batch = firstBatch + uint64_t(step);
  if (print) {
    std::string line = "step " + std::to_string(step + 1) + "/" +
                       std::to_string(steps) + " (batch " +
                       std::to_string(batch) + "):";
    char number[64];
    for (const auto &[name, value] : values) {
      std::snprintf(number, sizeof(number), " %s %.6g", name.c_str(), value);
      line += number;
    }
    std::snprintf(number, sizeof(number), " | %.2f ms, %.0f tokens/s", ms,
                  tokensPerSecond);
    std::printf("%s%s\n", line.c_str(), number);
    std::fflush(stdout);
  }
  if (log)
    appendLog(record(step, batch, ms, tokensPerSecond, values), ranks);
  return DTENSOR_OK;
}

void StepProgress::reportEvaluation(int step, double loss,
                                    const RunRanks &ranks) {
  evalCurve.emplace_back(double(step + 1), loss);
  if (print) {
    std::printf("eval after step %d: loss %.6g\n", step + 1, loss);
    std::fflush(stdout);
  }
  if (!log)
    return;
  nlohmann::ordered_json line;
  line["step"] = step;
  line["eval_loss"] = loss;
  appendLog(line.dump(), ranks);
}

void StepProgress::appendLog(const std::string &line, const RunRanks &ranks) {
  std::string text = line + "\n";
  if (std::fwrite(text.data(), 1, text.size(), log.get()) == text.size() &&
      std::fflush(log.get()) == 0)
    return;
  ranks.report("--log: cannot write: " + std::string(std::strerror(errno)));
  log.reset();
  logFailed = true;
}

std::string StepProgress::writePlot(const RunOptions &options) const {
  if (options.plot.empty())
    return "";
  if (plotted < 0)
    return "--plot: the entry has no scalar float output to draw";
  std::string name = scalars[plotted]->name;
  std::string title =
      name + " of " +
      (options.entry.empty() ? std::string("the run") : options.entry) + ", " +
      std::to_string(curve.size()) + " steps";
  std::vector<CurveSeries> series{{name, "#1f77b4", curve}};
  if (!evalCurve.empty())
    series.push_back({"eval " + name, "#ff7f0e", evalCurve});
  std::string error = writeTextFile(options.plot, lossCurveSvg(title, series));
  return error.empty() ? "" : "--plot: " + error;
}

} // namespace dtensor::tooling
