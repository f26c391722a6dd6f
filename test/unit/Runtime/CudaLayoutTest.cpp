//===- CudaLayoutTest.cpp - Pure parts of the runtime's CUDA backend ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How strided matrices map to cuBLASLt's column-major operands, checked by
// evaluating the product the mapping describes on the host, and how the
// pieces of uneven collectives become per-member blocks of a message.
//
//===----------------------------------------------------------------------===//

#include "MatrixLayout.h"
#include "PackedBlocks.h"

#include <gtest/gtest.h>

using namespace dtensor::rt;
using namespace dtensor::rt::cuda;

namespace {

/// Element (i, j) of op(stored) for a column-major stored matrix.
double at(const std::vector<double> &memory, const ColumnMajor &form, int64_t i,
          int64_t j) {
  return form.trans ? memory[j + i * form.ld] : memory[i + j * form.ld];
}

/// A matrix of rows x cols at `strides` in a buffer, values 1 + i * cols + j.
struct Stored {
  std::vector<double> memory;
  int64_t rows, cols, rowStride, colStride;
  Stored(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride)
      : rows(rows), cols(cols), rowStride(rowStride), colStride(colStride) {
    int64_t span = 1 + (rows - 1) * rowStride + (cols - 1) * colStride;
    memory.assign(static_cast<size_t>(span), -1.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        memory[i * rowStride + j * colStride] = value(i, j);
  }
  double value(int64_t i, int64_t j) const {
    return 1 + static_cast<double>(i * cols + j);
  }
};

TEST(CudaMatrixLayout, RowAndColumnMajorMapDirectly) {
  // Row-major 3 x 4 with padding (ld 6): the transpose of a 4 x 3 matrix.
  Stored rowMajor(3, 4, 6, 1);
  std::optional<ColumnMajor> form = columnMajorOf(3, 4, 6, 1);
  ASSERT_TRUE(form);
  EXPECT_TRUE(form->trans);
  EXPECT_EQ(form->rows, 4);
  EXPECT_EQ(form->cols, 3);
  EXPECT_EQ(form->ld, 6);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(at(rowMajor.memory, *form, i, j), rowMajor.value(i, j));
  // Column-major 3 x 4 with ld 5.
  Stored colMajor(3, 4, 1, 5);
  form = columnMajorOf(3, 4, 1, 5);
  ASSERT_TRUE(form);
  EXPECT_FALSE(form->trans);
  EXPECT_EQ(form->ld, 5);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(at(colMajor.memory, *form, i, j), colMajor.value(i, j));
}

TEST(CudaMatrixLayout, StridesWithoutAUnitDimArePacked) {
  EXPECT_FALSE(columnMajorOf(3, 4, 8, 2));
  // A unit stride but overlapping rows: not a valid leading dimension.
  EXPECT_FALSE(columnMajorOf(3, 4, 2, 1));
  // A single row or column: its other stride does not matter.
  std::optional<ColumnMajor> row = columnMajorOf(1, 4, 999, 1);
  ASSERT_TRUE(row);
  EXPECT_GE(row->ld, row->rows);
  std::optional<ColumnMajor> column = columnMajorOf(4, 1, 7, 0);
  ASSERT_TRUE(column);
  EXPECT_GE(column->ld, column->rows);
  ColumnMajor packed = packedRowMajor(3, 4);
  EXPECT_TRUE(packed.trans);
  EXPECT_EQ(packed.ld, 4);
}

/// C = A x B through the cuBLASLt description, on the host.
void checkProduct(bool aRowMajor, bool bRowMajor, bool cRowMajor) {
  const int64_t m = 3, n = 5, k = 4;
  Stored a = aRowMajor ? Stored(m, k, k, 1) : Stored(m, k, 1, m);
  Stored b = bRowMajor ? Stored(k, n, n, 1) : Stored(k, n, 1, k);
  std::vector<double> c(m * n, 0.0);
  ColumnMajor aForm = *columnMajorOf(m, k, a.rowStride, a.colStride);
  ColumnMajor bForm = *columnMajorOf(k, n, b.rowStride, b.colStride);
  ColumnMajor cForm =
      *columnMajorOf(m, n, cRowMajor ? n : 1, cRowMajor ? 1 : m);
  ColumnMajorGemm gemm = columnMajorGemm(m, n, k, aForm, bForm, cForm);
  EXPECT_EQ(gemm.swapped, cRowMajor);
  EXPECT_FALSE(gemm.c.trans);
  const std::vector<double> &first = gemm.swapped ? b.memory : a.memory;
  const std::vector<double> &second = gemm.swapped ? a.memory : b.memory;
  // What cuBLASLt computes: D[i + j * ldc] = sum_l op(A)(i, l) op(B)(l, j).
  for (int64_t i = 0; i < gemm.m; ++i)
    for (int64_t j = 0; j < gemm.n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < gemm.k; ++l)
        sum += at(first, gemm.a, i, l) * at(second, gemm.b, l, j);
      c[i + j * gemm.c.ld] = sum;
    }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t l = 0; l < k; ++l)
        expected += a.value(i, l) * b.value(l, j);
      double got = cRowMajor ? c[i * n + j] : c[i + j * m];
      EXPECT_EQ(got, expected) << i << ", " << j;
    }
}

TEST(CudaMatrixLayout, EveryStorageOfThreeOperands) {
  for (int mask = 0; mask < 8; ++mask)
    checkProduct(mask & 1, mask & 2, mask & 4);
}

StridedView view(char *data, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides) {
  StridedView v;
  v.data = data;
  v.elemSize = 4;
  v.sizes = std::move(sizes);
  v.strides = std::move(strides);
  return v;
}

TEST(CudaPackedBlocks, UnevenPiecesOfOneTensorAreTheMessage) {
  // A [10, 3] output gathered along dim 0 over 4 members: 3, 3, 3, 1 rows.
  std::vector<char> memory(10 * 3 * 4);
  StridedView out = view(memory.data(), {10, 3}, {3, 1});
  MemberPieces pieces;
  int64_t begin = 0;
  for (int64_t rows : {3, 3, 3, 1}) {
    pieces.push_back({out.slice(0, begin, rows)});
    begin += rows;
  }
  PackedBlocks blocks = packedBlocks(pieces);
  EXPECT_EQ(blocks.bytes, (std::vector<size_t>{36, 36, 36, 12}));
  EXPECT_EQ(blocks.offsets, (std::vector<size_t>{0, 36, 72, 108}));
  EXPECT_EQ(blocks.total, 120u);
  EXPECT_FALSE(blocks.uniform);
  EXPECT_TRUE(blocks.inPlace);
  EXPECT_EQ(blocks.base, memory.data());
}

TEST(CudaPackedBlocks, EmptyPiecesAndInnerDimsAreNotInPlace) {
  // N=9 over 4 members: 3, 3, 3, 0 rows; the empty piece is still in place.
  std::vector<char> memory(9 * 2 * 4);
  StridedView out = view(memory.data(), {9, 2}, {2, 1});
  MemberPieces rows = {{out.slice(0, 0, 3)},
                       {out.slice(0, 3, 3)},
                       {out.slice(0, 6, 3)},
                       {out.slice(0, 9, 0)}};
  PackedBlocks blocks = packedBlocks(rows);
  EXPECT_EQ(blocks.bytes, (std::vector<size_t>{24, 24, 24, 0}));
  EXPECT_TRUE(blocks.inPlace);
  // Split along the inner dim: pieces are strided, so they are packed.
  StridedView wide = view(memory.data(), {2, 9}, {9, 1});
  MemberPieces columns = {{wide.slice(1, 0, 5)}, {wide.slice(1, 5, 4)}};
  blocks = packedBlocks(columns);
  EXPECT_EQ(blocks.bytes, (std::vector<size_t>{40, 32}));
  EXPECT_FALSE(blocks.inPlace);
  EXPECT_EQ(blocks.base, nullptr);
}

TEST(CudaPackedBlocks, SeveralTensorsPackInTensorOrder) {
  std::vector<char> first(4 * 4), second(6 * 4);
  StridedView a = view(first.data(), {4}, {1});
  StridedView b = view(second.data(), {6}, {1});
  // Two members, two tensors each: member j's pieces travel as one block.
  MemberPieces pieces = {{a.slice(0, 0, 2), b.slice(0, 0, 3)},
                         {a.slice(0, 2, 2), b.slice(0, 3, 3)}};
  PackedBlocks blocks = packedBlocks(pieces);
  EXPECT_EQ(blocks.bytes, (std::vector<size_t>{20, 20}));
  EXPECT_EQ(blocks.offsets, (std::vector<size_t>{0, 20}));
  EXPECT_TRUE(blocks.uniform);
  EXPECT_FALSE(blocks.inPlace);
  // One view per member (all-to-all).
  blocks = packedBlocks(
      std::vector<StridedView>{a.slice(0, 0, 1), a.slice(0, 1, 3)});
  EXPECT_EQ(blocks.bytes, (std::vector<size_t>{4, 12}));
  EXPECT_TRUE(blocks.inPlace);
}

} // namespace
