//===- FaultSetting.cpp - The value of DTENSOR_TEST_FAULT -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "FaultSetting.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace dtensor::rt {

namespace {

bool parseInteger(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 18)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  value = std::strtoll(text.c_str(), nullptr, 10);
  return true;
}

} // namespace

Status parseFaultSetting(const char *text, FaultSetting &setting) {
  setting = FaultSetting();
  if (!text || !*text)
    return Status::success();
  std::string value = text;
  auto bad = [&](const std::string &why) {
    return invalidArgument(std::string(kFaultVariable) + "=\"" + value + "\": " +
                           why +
                           "; expected rank=R,step=K,point=collective|compute");
  };
  bool haveRank = false, haveStep = false, havePoint = false;
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = value.find(',', begin);
    if (end == std::string::npos)
      end = value.size();
    std::string item = value.substr(begin, end - begin);
    size_t equals = item.find('=');
    if (equals == std::string::npos)
      return bad("'" + item + "' is not key=value");
    std::string key = item.substr(0, equals), arg = item.substr(equals + 1);
    int64_t number = 0;
    if (key == "rank" && !haveRank) {
      if (!parseInteger(arg, number) || number > INT32_MAX)
        return bad("rank '" + arg + "' is not a rank (an integer >= 0)");
      setting.rank = static_cast<int>(number);
      haveRank = true;
    } else if (key == "step" && !haveStep) {
      if (!parseInteger(arg, number))
        return bad("step '" + arg + "' is not an integer >= 0");
      setting.step = number;
      haveStep = true;
    } else if (key == "point" && !havePoint) {
      if (arg == "collective")
        setting.point = FaultPoint::Collective;
      else if (arg == "compute")
        setting.point = FaultPoint::Compute;
      else
        return bad("point '" + arg + "' is not collective or compute");
      havePoint = true;
    } else if (key == "rank" || key == "step" || key == "point") {
      return bad(key + " is given twice");
    } else {
      return bad("unknown key '" + key + "'");
    }
    begin = end + 1;
  }
  if (!haveRank || !haveStep || !havePoint)
    return bad(std::string("missing ") +
               (!haveRank ? "rank" : !haveStep ? "step" : "point"));
  setting.armed = true;
  return Status::success();
}

} // namespace dtensor::rt
