//===- Dims.h - Sizes or strides of a view, off the heap --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sizes or strides of a StridedView. Every call of a compiled program
// into the runtime reads its buffers' descriptors into views, so these are
// made hundreds of times per step: they live inline up to kInline dims and
// go to the heap only beyond, so that a step's steady state does not
// allocate. (The runtime keeps off LLVM's headers, whose SmallVector does
// the same.)
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_DIMS_H
#define DTENSOR_RUNTIME_DIMS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace dtensor::rt {

class Dims {
public:
  static constexpr size_t kInline = 8;

  Dims() = default;
  explicit Dims(size_t count, int64_t value = 0) { assign(count, value); }
  Dims(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
  }
  Dims(const std::vector<int64_t> &values) { // NOLINT: implicit on purpose
    assign(values.begin(), values.end());
  }
  Dims(const Dims &other) { assign(other.begin(), other.end()); }
  Dims &operator=(const Dims &other) {
    if (this != &other)
      assign(other.begin(), other.end());
    return *this;
  }
  Dims &operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  template <typename It> void assign(It first, It last) {
    resize(static_cast<size_t>(std::distance(first, last)));
    std::copy(first, last, data());
  }
  void assign(size_t count, int64_t value) {
    resize(count);
    std::fill(begin(), end(), value);
  }
  /// New elements are zero.
  void resize(size_t count) {
    if (count > capacity()) {
      std::unique_ptr<int64_t[]> grown(new int64_t[count]());
      std::copy(begin(), end(), grown.get());
      heap = std::move(grown);
      heapCapacity = count;
    } else if (count > length) {
      std::fill(data() + length, data() + count, 0);
    }
    length = count;
  }
  void push_back(int64_t value) {
    if (length == capacity()) {
      size_t wanted = std::max<size_t>(2 * capacity(), 1);
      std::unique_ptr<int64_t[]> grown(new int64_t[wanted]());
      std::copy(begin(), end(), grown.get());
      heap = std::move(grown);
      heapCapacity = wanted;
    }
    data()[length++] = value;
  }

  size_t size() const { return length; }
  bool empty() const { return length == 0; }
  int64_t *data() { return heap ? heap.get() : inlineValues; }
  const int64_t *data() const { return heap ? heap.get() : inlineValues; }
  int64_t *begin() { return data(); }
  int64_t *end() { return data() + length; }
  const int64_t *begin() const { return data(); }
  const int64_t *end() const { return data() + length; }
  int64_t &operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t back() const { return data()[length - 1]; }
  std::vector<int64_t> vector() const { return {begin(), end()}; }

  friend bool operator==(const Dims &a, const Dims &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const Dims &a, const Dims &b) { return !(a == b); }

private:
  size_t capacity() const { return heap ? heapCapacity : kInline; }

  int64_t inlineValues[kInline] = {};
  std::unique_ptr<int64_t[]> heap;
  size_t heapCapacity = 0;
  size_t length = 0;
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_DIMS_H
