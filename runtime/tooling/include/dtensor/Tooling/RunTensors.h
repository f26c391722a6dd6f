//===- RunTensors.h - The tensors a run session sees ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tensors of a loaded program's selected entry as a run session handles
// them (name, role, element type, global shape), the check that the names a
// user gave exist, and fetching a tensor's global value onto rank 0.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNTENSORS_H
#define DTENSOR_TOOLING_RUNTENSORS_H

#include "dtensor/runtime.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dtensor::tooling {

class RunRanks;

struct RunTensor {
  std::string name;
  dtensor_role role;
  dtensor_dtype dtype;
  std::vector<int64_t> shape;
  /// Its index among the program's tensors.
  int32_t index = 0;

  size_t numElements() const;
  size_t bytes() const;
  /// "f32[2x3]".
  std::string typeString() const;
  /// A weight or a trained parameter: its value comes from --weights or an
  /// initializer.
  bool isWeight() const {
    return role == DTENSOR_WEIGHT || role == DTENSOR_PARAMETER;
  }
  /// State or a trained parameter: the steps change it.
  bool isUpdated() const {
    return role == DTENSOR_STATE || role == DTENSOR_PARAMETER;
  }
};

/// The tensors of the selected entry: its inputs and outputs, and the
/// weights and state the entries share.
std::vector<RunTensor> listRunTensors(dtensor_program *program);

/// "" when every name of `given` (the names a flag `flag` gave) is a tensor
/// of `tensors` it may name: an output (`outputs`) or an input or weight
/// (else), or state either way. Otherwise the message of the first that is
/// not, listing those it could be.
std::string unknownTensorError(const std::vector<RunTensor> &tensors,
                               const char *flag,
                               const std::map<std::string, std::string> &given,
                               bool outputs);

/// COLLECTIVE. The global value of `tensor` (Partial dims reduced) into
/// `data` on rank 0; the other ranks take part and get nothing.
dtensor_status fetchGlobal(dtensor_program *program, const RunRanks &ranks,
                           const RunTensor &tensor, std::vector<uint8_t> &data);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNTENSORS_H
