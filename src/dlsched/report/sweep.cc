#include "dlsched/report/sweep.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dlsched/report/run_data.h"

namespace dlsched::report {
namespace {

namespace fs = std::filesystem;

struct Cell {
  std::string path;
  std::string header;  // the first line, without its '\n'
  std::string row;     // the rest of the file, as written
  int64_t cells = 0;
};

std::optional<int64_t> ParseCount(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// One cell.csv: its header line, its row and the `cell` and `cells` it
// names.
core::Result<std::pair<int64_t, Cell>> ReadCell(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return core::Errorf("{}: cannot read file", p.string());
  const std::string text = ss.str();
  DLSCHED_TRY_LET(csv, ParseCsv(text, p.string()));
  if (csv->rows.size() != 1) {
    return core::Errorf("{}: expected the header and one row, got {} rows", p.string(),
                        csv->rows.size());
  }
  const auto col_cell = csv->Find("cell");
  const auto col_cells = csv->Find("cells");
  if (!col_cell || !col_cells) {
    return core::Errorf("{}:1: expected the columns 'cell' and 'cells'", p.string());
  }
  const auto& row = csv->rows[0];
  const auto cells = ParseCount(row.cells[*col_cells]);
  if (!cells || *cells < 1 || *cells > kMaxSweepCells) {
    return core::Errorf("{}:{}: cells: expected an integer from 1 to {}, got '{}'", p.string(),
                        row.line, kMaxSweepCells, row.cells[*col_cells]);
  }
  const auto index = ParseCount(row.cells[*col_cell]);
  if (!index || *index < 0 || *index >= *cells) {
    return core::Errorf("{}:{}: cell: expected an integer from 0 to {}, got '{}'", p.string(),
                        row.line, *cells - 1, row.cells[*col_cell]);
  }
  const size_t eol = text.find('\n');  // the header holds no quoted line break
  Cell c{p.string(), text.substr(0, eol), text.substr(eol + 1), *cells};
  return std::pair{*index, std::move(c)};
}

}  // namespace

bool HasSweepCells(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(fs::path(dir) / kCellsDir, ec);
}

core::Result<std::string> MergeSweepCells(const std::string& dir) {
  const fs::path root = fs::path(dir) / kCellsDir;
  std::map<int64_t, Cell> cells;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      // A temporary directory of a cell being written (report/output_dir.h).
      if (name.starts_with('.')) it.disable_recursion_pending();
      continue;
    }
    if (name != kCellFile || !it->is_regular_file(ec)) continue;
    DLSCHED_TRY_LET(cell, ReadCell(it->path()));
    auto [index, c] = std::move(*cell);
    if (!cells.empty()) {
      const Cell& first = cells.begin()->second;
      if (c.header != first.header) {
        return core::Errorf("{}:1: its header differs from {}'s: not the same sweep", c.path,
                            first.path);
      }
      if (c.cells != first.cells) {
        return core::Errorf("{}: a grid of {} cells, but {} is of {}: not the same sweep", c.path,
                            c.cells, first.path, first.cells);
      }
    }
    if (auto [at, fresh] = cells.try_emplace(index, c); !fresh) {
      return core::Errorf("{}: cell {} again (also in {})", c.path, index, at->second.path);
    }
  }
  if (ec) return core::Errorf("{}: cannot read directory: {}", root.string(), ec.message());
  if (cells.empty())
    return core::Errorf("{}: holds no {} (no cell has finished)", root.string(), kCellFile);
  const int64_t total = cells.begin()->second.cells;
  if (static_cast<int64_t>(cells.size()) != total) {
    std::vector<int64_t> missing;
    for (int64_t i = 0; i < total && missing.size() < 10; ++i) {
      if (!cells.contains(i)) missing.push_back(i);
    }
    return core::Errorf("{}: {} of {} cells have no {} yet: {}{}", root.string(),
                        total - static_cast<int64_t>(cells.size()), total, kCellFile,
                        fmt::join(missing, ", "),
                        total - static_cast<int64_t>(cells.size()) > 10 ? ", ..." : "");
  }
  std::string out = cells.begin()->second.header + "\n";
  for (const auto& [index, c] : cells) {
    out += c.row;
    if (!out.ends_with('\n')) out += '\n';
  }
  return out;
}

}  // namespace dlsched::report
