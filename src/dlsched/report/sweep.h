#pragma once

// A sweep's cells read back (docs/sweeps.md): `dlsched sweep` writes each
// cell of its grid to DIR/cells/<profile>/load-<L>[/seed-<S>]/, with a
// cell.csv holding sweep.csv's header and the cell's row. A whole sweep
// also writes DIR/sweep.csv; cells run one at a time (`--cell N`, one per
// index of a Kubernetes Indexed Job) leave only their directories, and
// MergeSweepCells builds the same sweep.csv from them.

#include <string>
#include <string_view>

#include "dlsched/core/error.h"

namespace dlsched::report {

inline constexpr std::string_view kCellsDir = "cells";
inline constexpr std::string_view kCellFile = "cell.csv";
// Most cells a grid may have (a hand-edited `cells` column is bounded).
inline constexpr int64_t kMaxSweepCells = 1'000'000;

// Whether `dir` holds a cells/ directory.
bool HasSweepCells(const std::string& dir);

// sweep.csv's text from the cell.csv files under `dir`/cells/: the header
// once, then each cell's row as its file holds it, in the order of the
// `cell` column (0 .. cells - 1), so that it equals, byte for byte, the
// sweep.csv a whole run of the same grid writes. Directories whose name
// starts with '.' (a cell still being written) are skipped. Errors: a cell
// missing ("<dir>/cells: 2 of 12 cells have no cell.csv yet: 3, 7"), two
// files for one cell, headers or grid sizes that differ, or a cell.csv
// that is not one header and one row.
core::Result<std::string> MergeSweepCells(const std::string& dir);

}  // namespace dlsched::report
