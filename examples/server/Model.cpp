//===- Model.cpp - The compiled token model on this rank ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Model.h"

#include "dtensor/Tooling/ElementTypes.h"

#include <algorithm>
#include <cstring>

namespace dtensor::server {

namespace {

struct TensorInfo {
  std::string name;
  dtensor_role role;
  dtensor_dtype dtype;
  std::vector<int64_t> shape;
};

std::vector<TensorInfo> listTensors(const dtensor_program *program) {
  int32_t count = 0;
  dtensor_program_num_tensors(program, &count);
  std::vector<TensorInfo> tensors;
  for (int32_t i = 0; i < count; ++i) {
    dtensor_tensor_info info;
    if (dtensor_program_tensor_info(program, i, &info) != DTENSOR_OK)
      continue;
    tensors.push_back({info.name, info.role, info.dtype,
                       std::vector<int64_t>(info.global_shape,
                                            info.global_shape + info.ndim)});
  }
  return tensors;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The tensor called `name` with `role`, or the only one that `fits`.
const TensorInfo *pick(const std::vector<TensorInfo> &tensors,
                       const std::string &name, dtensor_role role,
                       const char *what, const char *flag,
                       bool (*fits)(const TensorInfo &), bool optional,
                       std::string &error) {
  std::vector<const TensorInfo *> found;
  for (const TensorInfo &tensor : tensors)
    if (tensor.role == role &&
        (name.empty() ? fits(tensor) : tensor.name == name))
      found.push_back(&tensor);
  if (found.size() == 1 && fits(*found[0]))
    return found[0];
  if (!name.empty())
    error = found.empty() ? std::string("the artifact has no ") + what +
                                " called '" + name + "'"
                          : std::string(flag) + " " + name + " is not " + what;
  else if (found.empty() && !optional)
    error = std::string("the artifact has no ") + what;
  else if (found.size() > 1)
    error = std::string("the artifact has several candidates for ") + what +
            " ('" + found[0]->name + "', '" + found[1]->name +
            "'): choose one with " + flag;
  return nullptr;
}

} // namespace

Model::~Model() {
  if (program_ || context_)
    close();
}

dtensor_status Model::open(const Options &options, std::string &error) {
  dtensor_context_options contextOptions{sizeof(dtensor_context_options),
                                         nullptr, options.threads};
  auto failed = [&](dtensor_status status) {
    error = dtensor_last_error();
    return status;
  };
  if (dtensor_status status =
          dtensor_context_create(&contextOptions, &context_))
    return failed(status);
  int32_t rank = 0, size = 1;
  dtensor_context_rank(context_, &rank);
  dtensor_context_world_size(context_, &size);
  rank_ = rank;
  worldSize_ = size;
  if (dtensor_status status = dtensor_program_load(
          context_, options.artifact.c_str(), nullptr, &program_))
    return failed(status);
  // Initializers first so that the file overrides them (as dtensor-run).
  int32_t uninitialized = 0;
  if (dtensor_status status =
          dtensor_program_init_weights(program_, options.seed, &uninitialized))
    return failed(status);
  if (!options.weights.empty()) {
    if (dtensor_status status =
            dtensor_program_load_weights(program_, options.weights.c_str()))
      return failed(status);
    return DTENSOR_OK;
  }
  // Serving zeros would answer token 0 to everything: refuse. Every rank
  // reads the same manifest, so every rank refuses.
  if (uninitialized > 0) {
    std::string names;
    int32_t count = 0, listed = 0;
    dtensor_program_num_tensors(program_, &count);
    for (int32_t i = 0; i < count && listed < 3; ++i) {
      dtensor_tensor_info info;
      int32_t hasInit = 0;
      if (dtensor_program_tensor_info(program_, i, &info) == DTENSOR_OK &&
          (info.role == DTENSOR_WEIGHT || info.role == DTENSOR_PARAMETER) &&
          dtensor_program_has_init(program_, i, &hasInit) == DTENSOR_OK &&
          !hasInit) {
        names += std::string(listed ? ", " : "") + "'" + info.name + "'";
        ++listed;
      }
    }
    error = std::to_string(uninitialized) +
            " weight(s) have no initializer in the artifact (" + names +
            (uninitialized > listed ? ", ..." : "") +
            "): give --weights FILE.safetensors";
    return DTENSOR_ERR_WEIGHTS;
  }
  return DTENSOR_OK;
}

/// The vocabulary: the flag, else the logits' last dim (`logits` may be
/// null), else the embedding weight's first dim. A flag larger than the
/// embedding would let ids past its end reach the gather.
static bool findVocab(const Options &options,
                      const std::vector<TensorInfo> &tensors,
                      const TensorInfo *logits, ModelSpec &spec,
                      std::string &error) {
  auto embedding =
      std::find_if(tensors.begin(), tensors.end(), [&](const TensorInfo &t) {
        return (t.role == DTENSOR_WEIGHT || t.role == DTENSOR_PARAMETER) &&
               t.name == options.embeddingName;
      });
  bool haveEmbedding = embedding != tensors.end() && !embedding->shape.empty();
  if (options.vocab) {
    spec.vocab = *options.vocab;
    spec.vocabSource = "--vocab";
    if (haveEmbedding && spec.vocab > embedding->shape[0]) {
      error = "--vocab " + std::to_string(spec.vocab) + " exceeds the " +
              std::to_string(embedding->shape[0]) + " rows of '" +
              embedding->name + "'";
      return false;
    }
  } else if (logits) {
    spec.vocab = logits->shape[2];
    spec.vocabSource = "the last dim of '" + logits->name + "'";
  } else if (haveEmbedding) {
    spec.vocab = embedding->shape[0];
    spec.vocabSource = "the first dim of '" + embedding->name + "'";
  } else {
    error = "cannot tell the vocabulary size: the artifact has no logits "
            "output and no weight '" +
            options.embeddingName + "'; give --vocab V or --embedding NAME";
    return false;
  }
  if (spec.vocab < 1) {
    error = "the vocabulary is empty (" + spec.vocabSource + ")";
    return false;
  }
  return true;
}

bool Model::describe(const Options &options, ModelSpec &spec,
                     std::string &error) {
  std::vector<TensorInfo> tensors = listTensors(program_);
  // An artifact with state: a KV cache, driven by its generation entries.
  if (std::any_of(tensors.begin(), tensors.end(), [](const TensorInfo &t) {
        return t.role == DTENSOR_STATE;
      })) {
    generator_ = tooling::Generator::create(program_, error, rank_);
    if (!generator_)
      return false;
    spec.cache = true;
    spec.batch = generator_->numSlots();
    spec.seqLen = generator_->maxPositions();
    // The steps' logits [B, T, V] (every entry has them or none counts).
    TensorInfo stepLogits{"logits",
                          DTENSOR_OUTPUT,
                          DTENSOR_F32,
                          {spec.batch, 1, generator_->logitsVocab()}};
    bool haveLogits = generator_->logitsVocab() > 0;
    if (haveLogits)
      spec.logits = stepLogits.name;
    if (!findVocab(options, tensors, haveLogits ? &stepLogits : nullptr, spec,
                   error))
      return false;
    if (haveLogits && spec.vocab != generator_->logitsVocab()) {
      error = "--vocab " + std::to_string(spec.vocab) +
              " differs from the last dim of the steps' logits (" +
              std::to_string(generator_->logitsVocab()) + ")";
      return false;
    }
    return true;
  }
  const TensorInfo *tokens = pick(
      tensors, options.tokensName, DTENSOR_INPUT,
      "i64 input of rank 2 (the tokens)", "--tokens",
      [](const TensorInfo &t) {
        return t.dtype == DTENSOR_I64 && t.shape.size() == 2;
      },
      false, error);
  if (!tokens)
    return false;
  for (const TensorInfo &tensor : tensors)
    if (tensor.role == DTENSOR_INPUT && tensor.name != tokens->name) {
      error = "the artifact has an input besides '" + tokens->name + "' ('" +
              tensor.name + "'); the server sets only the tokens";
      return false;
    }
  const TensorInfo *output = pick(
      tensors, options.outputName, DTENSOR_OUTPUT,
      "i64 output of rank 2 (the argmax)", "--output",
      [](const TensorInfo &t) {
        return t.dtype == DTENSOR_I64 && t.shape.size() == 2;
      },
      false, error);
  if (!output)
    return false;
  if (output->shape != tokens->shape) {
    error = "output '" + output->name + "' has shape " +
            shapeText(output->shape) + ", not the tokens' " +
            shapeText(tokens->shape);
    return false;
  }
  spec.tokens = tokens->name;
  spec.output = output->name;
  spec.batch = tokens->shape[0];
  spec.seqLen = tokens->shape[1];
  if (spec.batch < 1 || spec.seqLen < 1) {
    error = "the tokens have an empty shape " + shapeText(tokens->shape);
    return false;
  }

  const TensorInfo *logits = pick(
      tensors, options.logitsName, DTENSOR_OUTPUT,
      "float output of rank 3 (the logits)", "--logits",
      [](const TensorInfo &t) {
        return tooling::isFloatingPoint(t.dtype) && t.shape.size() == 3;
      },
      options.logitsName.empty(), error);
  if (!logits && !options.logitsName.empty())
    return false;
  error.clear();
  if (logits) {
    if (logits->shape[0] != spec.batch || logits->shape[1] != spec.seqLen) {
      error = "logits '" + logits->name + "' have shape " +
              shapeText(logits->shape) + ", expected [" +
              std::to_string(spec.batch) + ", " + std::to_string(spec.seqLen) +
              ", vocab]";
      return false;
    }
    spec.logits = logits->name;
    spec.logitsDtype = logits->dtype;
  }

  return findVocab(options, tensors, logits, spec, error);
}

dtensor_status Model::step(const ModelSpec &spec,
                           const std::vector<int64_t> &tokens, bool fetchLogits,
                           bool breakIt, std::vector<int64_t> &next,
                           std::vector<float> &logits, std::string &error) {
  auto failed = [&](dtensor_status status) {
    error = dtensor_last_error();
    return status;
  };
  int64_t shape[2] = {spec.batch, spec.seqLen};
  // The injected failure: a flat shape, which dtensor_program_set rejects on
  // this rank before any communication; its agreement fails every rank.
  int64_t flat[1] = {spec.batch * spec.seqLen};
  if (dtensor_status status = dtensor_program_set(
          program_, spec.tokens.c_str(), DTENSOR_GLOBAL, DTENSOR_I64,
          breakIt ? 1 : 2, breakIt ? flat : shape, tokens.data(),
          tokens.size() * sizeof(int64_t)))
    return failed(status);
  if (dtensor_status status = dtensor_program_run(program_))
    return failed(status);
  bool root = rank_ == 0;
  next.assign(root ? tokens.size() : 0, 0);
  if (dtensor_status status =
          dtensor_program_get(program_, spec.output.c_str(), DTENSOR_GLOBAL, 0,
                              root ? next.data() : nullptr,
                              root ? next.size() * sizeof(int64_t) : 0))
    return failed(status);
  logits.clear();
  if (!fetchLogits)
    return DTENSOR_OK;
  size_t count = static_cast<size_t>(spec.batch * spec.seqLen * spec.vocab);
  size_t elementSize = dtensor_dtype_size(spec.logitsDtype);
  std::vector<unsigned char> raw(root ? count * elementSize : 0);
  if (dtensor_status status =
          dtensor_program_get(program_, spec.logits.c_str(), DTENSOR_GLOBAL, 0,
                              root ? raw.data() : nullptr, raw.size()))
    return failed(status);
  if (!root)
    return DTENSOR_OK;
  logits = tooling::floatElements(raw.data(), spec.logitsDtype, count);
  return DTENSOR_OK;
}

namespace {
/// --fail-kind error with a KV cache: a flat shape for the tokens, which
/// dtensor_program_set rejects on this rank; its agreement fails every rank
/// (the others are setting the tokens of the same step).
dtensor_status breakSet(dtensor_program *program, std::string &error) {
  int64_t flat[1] = {1};
  int64_t token = 0;
  dtensor_status status =
      dtensor_program_set(program, "tokens", DTENSOR_GLOBAL, DTENSOR_I64, 1,
                          flat, &token, sizeof(token));
  error = dtensor_last_error();
  return status ? status : DTENSOR_ERR_INVALID_ARGUMENT;
}

} // namespace

dtensor_status Model::prefill(int64_t slot, const std::vector<int64_t> &prompt,
                              bool fetchLogits, bool breakIt,
                              std::vector<int64_t> &all,
                              std::vector<float> &logits, std::string &error) {
  logits.clear();
  if (breakIt)
    return breakSet(program_, error);
  int64_t next = 0;
  if (!generator_->prefill(slot, prompt, next, error, &all,
                           fetchLogits ? &logits : nullptr))
    return DTENSOR_ERR_RUNTIME;
  return DTENSOR_OK;
}

dtensor_status Model::decode(const std::vector<tooling::Generator::Row> &rows,
                             bool fetchLogits, bool breakIt,
                             std::vector<int64_t> &next,
                             std::vector<float> &logits, std::string &error) {
  logits.clear();
  if (breakIt)
    return breakSet(program_, error);
  if (!generator_->decode(rows, next, error, fetchLogits ? &logits : nullptr))
    return DTENSOR_ERR_RUNTIME;
  return DTENSOR_OK;
}

dtensor_status Model::close() {
  generator_.reset();
  dtensor_status status = dtensor_program_destroy(program_);
  program_ = nullptr;
  dtensor_status contextStatus = dtensor_context_destroy(context_);
  context_ = nullptr;
  return status != DTENSOR_OK ? status : contextStatus;
}

} // namespace dtensor::server
