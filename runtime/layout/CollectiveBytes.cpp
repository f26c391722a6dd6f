//===- CollectiveBytes.cpp - bytes a rank sends in a collective -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Layout/CollectiveBytes.h"

#include "dtensor/Layout/LayoutMath.h"

#include <iterator>

namespace dtensor::layout {

namespace {

constexpr const char *kNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                  "all_to_all", "broadcast", "shift"};

/// Elements of `shape`, or nullopt when a size is kDynamic.
std::optional<int64_t> elementsOf(const std::vector<int64_t> &shape) {
  int64_t elements = 1;
  for (int64_t size : shape) {
    if (size == kDynamic || size < 0)
      return std::nullopt;
    elements *= size;
  }
  return elements;
}

/// The largest piece of a dim of `whole` split over n ranks: `piece` when
/// static (it holds on every rank), else ceil(whole / n).
int64_t largestPiece(int64_t piece, int64_t whole, int64_t n) {
  if (piece != kDynamic)
    return piece;
  if (whole == kDynamic)
    return kDynamic;
  return (whole + n - 1) / n;
}

} // namespace

const char *collectiveKindName(CollectiveKind kind) {
  return kNames[static_cast<int>(kind)];
}

std::optional<CollectiveKind> collectiveKindNamed(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (name == kNames[i])
      return static_cast<CollectiveKind>(i);
  return std::nullopt;
}

std::optional<int64_t> ringBytesSent(CollectiveKind kind,
                                     const std::vector<int64_t> &input,
                                     const std::vector<int64_t> &result,
                                     int64_t dim, int64_t concatDim,
                                     int64_t groupSize, int64_t elementBytes,
                                     int64_t wholeSize) {
  if (groupSize < 1 || input.size() != result.size())
    return std::nullopt;
  if (groupSize == 1)
    return 0;
  int64_t n = groupSize;
  int64_t rank = static_cast<int64_t>(input.size());
  std::vector<int64_t> block = input;
  int64_t messages = n - 1;
  auto inRange = [&](int64_t d) { return d >= 0 && d < rank; };
  switch (kind) {
  case CollectiveKind::AllReduce: {
    std::optional<int64_t> elements = elementsOf(input);
    if (!elements)
      return std::nullopt;
    block = {(*elements + n - 1) / n};
    messages = 2 * (n - 1);
    break;
  }
  case CollectiveKind::Broadcast:
    messages = 1;
    break;
  case CollectiveKind::AllGather:
    if (!inRange(dim))
      return std::nullopt;
    block[dim] = largestPiece(input[dim], result[dim], n);
    break;
  case CollectiveKind::ReduceScatter:
    if (!inRange(dim))
      return std::nullopt;
    block[dim] = largestPiece(result[dim], input[dim], n);
    break;
  case CollectiveKind::AllToAll:
    if (!inRange(dim) || !inRange(concatDim))
      return std::nullopt;
    block[dim] = largestPiece(result[dim], input[dim], n);
    block[concatDim] = largestPiece(input[concatDim], result[concatDim], n);
    break;
  case CollectiveKind::Shift:
    if (!inRange(dim))
      return std::nullopt;
    block[dim] = largestPiece(input[dim], wholeSize, n);
    messages = 1;
    break;
  }
  std::optional<int64_t> elements = elementsOf(block);
  if (!elements)
    return std::nullopt;
  return messages * *elements * elementBytes;
}

} // namespace dtensor::layout
