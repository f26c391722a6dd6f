//===- ShardingView.cpp - which device holds which block --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Layout/ShardingView.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace dtensor::layout {

namespace {

/// Every device's shard, in device order.
std::vector<layout::Shard> deviceShards(const std::vector<int64_t> &shape,
                                        const std::vector<Placement> &placements,
                                        const Mesh &mesh) {
  std::vector<layout::Shard> shards;
  for (int64_t device = 0; device < mesh.size(); ++device)
    shards.push_back(
        localShard(shape, placements, mesh, *mesh.coordOfDevice(device)));
  return shards;
}

bool isEmpty(const layout::Shard &shard) {
  return std::any_of(shard.shape.begin(), shard.shape.end(),
                     [](int64_t size) { return size == 0; });
}

/// "a-b" (inclusive), or "a" for one index.
std::string formatRange(const Range &range) {
  if (range.size() == 1)
    return std::to_string(range.begin);
  return std::to_string(range.begin) + "-" + std::to_string(range.end - 1);
}

/// "0, 1" for copies, "0+1, 2+3" for Partial copies split over devices.
std::string formatHolders(const ShardingBlock &block) {
  std::string text;
  for (const std::vector<int64_t> &copy : block.copies) {
    if (!text.empty())
      text += ", ";
    for (size_t i = 0; i < copy.size(); ++i)
      text += (i ? "+" : "") + std::to_string(copy[i]);
  }
  return text;
}

/// The blocks grouped by their ranges over the leading (all but the last
/// two) dims: one group per 2-D slice, in order.
std::vector<std::vector<const ShardingBlock *>>
slices(const std::vector<ShardingBlock> &blocks, size_t rank) {
  std::vector<std::vector<const ShardingBlock *>> result;
  size_t leading = rank > 2 ? rank - 2 : 0;
  auto sameSlice = [&](const ShardingBlock &a, const ShardingBlock &b) {
    return std::equal(a.ranges.begin(), a.ranges.begin() + leading,
                      b.ranges.begin());
  };
  for (const ShardingBlock &block : blocks) {
    if (result.empty() || !sameSlice(*result.back().front(), block))
      result.emplace_back();
    result.back().push_back(&block);
  }
  return result;
}

/// The distinct ranges of `dim` among `blocks`, in order.
std::vector<Range> rangesOf(const std::vector<const ShardingBlock *> &blocks,
                            int64_t dim) {
  std::vector<Range> ranges;
  for (const ShardingBlock *block : blocks)
    if (std::find(ranges.begin(), ranges.end(), block->ranges[dim]) ==
        ranges.end())
      ranges.push_back(block->ranges[dim]);
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  return ranges;
}

/// "[0-1, 4-7]": the slice's ranges over the leading dims.
std::string sliceHeading(const ShardingBlock &block, size_t rank) {
  std::string text = "slice [";
  for (size_t dim = 0; dim + 2 < rank; ++dim)
    text += (dim ? ", " : "") + formatRange(block.ranges[dim]);
  return text + ", :, :]";
}

/// A slice as rows of cells: a header row of column ranges, then one row
/// per row range (rank 1: a single row; rank 0: a single cell).
std::vector<std::vector<std::string>>
sliceCells(const std::vector<const ShardingBlock *> &blocks, size_t rank) {
  if (rank == 0)
    return {{"scalar", formatHolders(*blocks.front())}};
  int64_t colDim = static_cast<int64_t>(rank) - 1;
  std::vector<Range> cols = rangesOf(blocks, colDim);
  std::vector<Range> rows;
  if (rank >= 2)
    rows = rangesOf(blocks, colDim - 1);
  else
    rows.push_back(Range{0, 1});
  std::vector<std::vector<std::string>> table;
  // Rank 1 has no row labels.
  std::vector<std::string> header;
  if (rank >= 2)
    header.push_back("");
  for (const Range &col : cols)
    header.push_back("Col " + formatRange(col));
  table.push_back(header);
  for (const Range &row : rows) {
    std::vector<std::string> line;
    if (rank >= 2)
      line.push_back("Row " + formatRange(row));
    for (const Range &col : cols) {
      auto block = std::find_if(
          blocks.begin(), blocks.end(), [&](const ShardingBlock *b) {
            return b->ranges[colDim] == col &&
                   (rank < 2 || b->ranges[colDim - 1] == row);
          });
      line.push_back(block == blocks.end() ? "" : formatHolders(**block));
    }
    table.push_back(line);
  }
  return table;
}

std::string partialKinds(const std::vector<Placement> &placements) {
  std::string kinds;
  for (const Placement &p : placements)
    if (p.isPartial()) {
      std::string kind = stringifyReduceKind(p.reduce);
      if (kinds.find(kind) == std::string::npos)
        kinds += (kinds.empty() ? "" : ", ") + kind;
    }
  return kinds;
}

std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::vector<ShardingBlock>
shardingBlocks(const std::vector<int64_t> &globalShape,
               const std::vector<Placement> &placements, const Mesh &mesh) {
  std::vector<layout::Shard> shards =
      deviceShards(globalShape, placements, mesh);
  size_t rank = globalShape.size();

  // Each dim cut at every shard's edges.
  std::vector<std::vector<Range>> intervals(rank);
  for (size_t dim = 0; dim < rank; ++dim) {
    std::set<int64_t> cuts = {0, globalShape[dim]};
    for (const layout::Shard &shard : shards) {
      // A head-tail dim is held as two pieces: each cuts the grid.
      for (const Range &piece : shard.pieces[dim]) {
        cuts.insert(piece.begin);
        cuts.insert(piece.end);
      }
    }
    for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it)
      intervals[dim].push_back(Range{*it, *std::next(it)});
    if (intervals[dim].empty())
      return {}; // A dim of size 0: no element, no block.
  }

  // Devices that differ only along Partial mesh dims hold parts of one copy.
  auto copyKey = [&](int64_t device) {
    std::vector<int64_t> coord = *mesh.coordOfDevice(device);
    for (size_t meshDim = 0; meshDim < placements.size(); ++meshDim)
      if (placements[meshDim].isPartial())
        coord[meshDim] = 0;
    return coord;
  };

  std::vector<ShardingBlock> blocks;
  std::vector<size_t> index(rank, 0);
  while (true) {
    ShardingBlock block;
    for (size_t dim = 0; dim < rank; ++dim)
      block.ranges.push_back(intervals[dim][index[dim]]);
    std::map<std::vector<int64_t>, size_t> copyOf;
    for (int64_t device = 0; device < mesh.size(); ++device) {
      const layout::Shard &shard = shards[device];
      if (isEmpty(shard))
        continue;
      bool holds = true;
      for (size_t dim = 0; dim < rank && holds; ++dim)
        holds = std::any_of(shard.pieces[dim].begin(), shard.pieces[dim].end(),
                            [&](const Range &piece) {
                              return piece.begin <= block.ranges[dim].begin &&
                                     block.ranges[dim].end <= piece.end;
                            });
      if (!holds)
        continue;
      auto [it, added] = copyOf.try_emplace(copyKey(device), block.copies.size());
      if (added)
        block.copies.emplace_back();
      block.copies[it->second].push_back(device);
    }
    if (!block.copies.empty())
      blocks.push_back(std::move(block));
    // Next grid cell, row-major.
    size_t dim = rank;
    while (dim > 0 && ++index[dim - 1] == intervals[dim - 1].size())
      index[--dim] = 0;
    if (dim == 0)
      break;
  }
  return blocks;
}

std::string formatShardingTable(const std::vector<int64_t> &globalShape,
                                const std::vector<Placement> &placements,
                                const Mesh &mesh) {
  std::vector<ShardingBlock> blocks =
      shardingBlocks(globalShape, placements, mesh);
  size_t rank = globalShape.size();
  std::string text;
  if (blocks.empty())
    return "(no elements)\n";
  for (const std::vector<const ShardingBlock *> &slice : slices(blocks, rank)) {
    if (rank > 2)
      text += sliceHeading(*slice.front(), rank) + "\n";
    std::vector<std::vector<std::string>> cells = sliceCells(slice, rank);
    std::vector<size_t> widths;
    for (const auto &row : cells)
      for (size_t i = 0; i < row.size(); ++i) {
        widths.resize(std::max(widths.size(), row.size()), 0);
        widths[i] = std::max(widths[i], row[i].size());
      }
    for (const auto &row : cells) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        std::string cell = row[i];
        if (i + 1 < row.size())
          cell.resize(widths[i], ' ');
        line += (i ? "  " : "") + cell;
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      text += line + "\n";
    }
  }

  std::string empty;
  std::vector<layout::Shard> shards =
      deviceShards(globalShape, placements, mesh);
  for (int64_t device = 0; device < mesh.size(); ++device)
    if (isEmpty(shards[device]))
      empty += (empty.empty() ? "" : ", ") + std::to_string(device);
  text += "cells: the devices holding each block, copies separated by ','";
  std::string kinds = partialKinds(placements);
  if (!kinds.empty())
    text += "; a+b: one copy held as Partial(" + kinds +
            ") contributions of a and b";
  text += "\n";
  if (!empty.empty())
    text += "empty shard on device" + std::string(empty.find(',') ==
                                                          std::string::npos
                                                      ? " "
                                                      : "s ") +
            empty + "\n";
  return text;
}

std::string renderShardingSvg(const std::vector<int64_t> &globalShape,
                              const std::vector<Placement> &placements,
                              const Mesh &mesh, const std::string &title) {
  static const char *const kPalette[] = {
      "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
      "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  constexpr int kLeft = 80, kTop = 30, kWidth = 480, kHeight = 240;
  constexpr int kMinCell = 28, kGap = 36;
  std::vector<ShardingBlock> blocks =
      shardingBlocks(globalShape, placements, mesh);
  size_t rank = globalShape.size();
  std::string body;
  int y = kTop + 10;
  int widest = kLeft + kWidth;
  char buffer[512];
  for (const std::vector<const ShardingBlock *> &slice : slices(blocks, rank)) {
    if (rank > 2) {
      std::snprintf(buffer, sizeof(buffer),
                    "<text x=\"4\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
                    y, escapeXml(sliceHeading(*slice.front(), rank)).c_str());
      body += buffer;
      y += 18;
    }
    int64_t colDim = static_cast<int64_t>(rank) - 1;
    std::vector<Range> cols =
        rank ? rangesOf(slice, colDim) : std::vector<Range>{Range{0, 1}};
    std::vector<Range> rows = rank >= 2 ? rangesOf(slice, colDim - 1)
                                        : std::vector<Range>{Range{0, 1}};
    int64_t colTotal = rank ? globalShape[colDim] : 1;
    int64_t rowTotal = rank >= 2 ? globalShape[colDim - 1] : 1;
    std::vector<int> colX = {kLeft}, rowY = {y + 16};
    for (const Range &col : cols)
      colX.push_back(colX.back() +
                     std::max<int>(kMinCell, static_cast<int>(
                                                 col.size() * kWidth / colTotal)));
    for (const Range &row : rows)
      rowY.push_back(rowY.back() +
                     std::max<int>(kMinCell, static_cast<int>(
                                                 row.size() * kHeight / rowTotal)));
    widest = std::max(widest, colX.back());
    for (size_t c = 0; c < cols.size() && rank; ++c) {
      std::snprintf(buffer, sizeof(buffer),
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">Col "
                    "%s</text>\n",
                    (colX[c] + colX[c + 1]) / 2, y + 10,
                    formatRange(cols[c]).c_str());
      body += buffer;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rank >= 2) {
        std::snprintf(buffer, sizeof(buffer),
                      "<text x=\"4\" y=\"%d\">Row %s</text>\n",
                      (rowY[r] + rowY[r + 1]) / 2 + 5,
                      formatRange(rows[r]).c_str());
        body += buffer;
      }
      for (size_t c = 0; c < cols.size(); ++c) {
        auto block = std::find_if(
            slice.begin(), slice.end(), [&](const ShardingBlock *b) {
              return rank == 0 || (b->ranges[colDim] == cols[c] &&
                                   (rank < 2 || b->ranges[colDim - 1] == rows[r]));
            });
        if (block == slice.end())
          continue;
        int64_t first = (*block)->copies.front().front();
        std::snprintf(
            buffer, sizeof(buffer),
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
            "stroke=\"#333\"/>\n<text x=\"%d\" y=\"%d\" "
            "text-anchor=\"middle\">%s</text>\n",
            colX[c], rowY[r], colX[c + 1] - colX[c], rowY[r + 1] - rowY[r],
            kPalette[first % (sizeof(kPalette) / sizeof(kPalette[0]))],
            (colX[c] + colX[c + 1]) / 2, (rowY[r] + rowY[r + 1]) / 2 + 5,
            escapeXml(formatHolders(**block)).c_str());
        body += buffer;
      }
    }
    y = rowY.back() + kGap;
  }
  std::snprintf(buffer, sizeof(buffer),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" font-family=\"monospace\" font-size=\"12\">\n",
                widest + 20, y);
  return buffer + ("<title>" + escapeXml(title) + "</title>\n") +
         ("<text x=\"4\" y=\"16\" font-weight=\"bold\">" +
          escapeXml(title) + "</text>\n") +
         body + "</svg>\n";
}

} // namespace dtensor::layout
