#pragma once

// Helpers shared by the cluster, workload and profile parsers. Every error
// they produce is one line: "<source>: <field path>: <what was expected>".

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "dlsched/config/fields.h"
#include "dlsched/core/error.h"
#include "dlsched/core/limits.h"
#include "dlsched/core/resources.h"

namespace dlsched::config::internal {

// The field reader's pieces (fields.h), as the readers here name them.
using config::Index;
using config::Key;
using config::kMaxInt;
using config::kNonNegative;
using config::kPositive;
using config::kPositiveTime;
using config::kTime;
using config::NumberRange;

// How a value is shown after "got": 'text' for scalars, "a map", "a list" or
// "nothing" otherwise.
std::string Describe(const YAML::Node& node);

// True when the node carries a value; an absent key and an explicit null
// (`key:` or `key: ~`) both mean "not given", so the default applies.
inline bool Given(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

// Reads a whole regular file of at most core::kMaxInputBytes; anything else
// (a FIFO, a device, a directory, a larger file) is "<path>: cannot read
// file: <why>", and so is any I/O error. Never blocks on a FIFO.
core::Result<std::string> ReadFile(const std::string& path);

// What ReadFile checks before it reads: `path` opened without blocking (a
// FIFO without a writer), a regular file of at most `max_bytes`. The file
// descriptor (the caller closes it) and the file's size, or "<path>: cannot
// read file: <why>"; a larger file is TooLargeFile's error, `limited`
// naming what is limited ("input files", "CSV inputs").
struct InputFile {
  int fd = -1;
  uint64_t size = 0;
};
core::Result<InputFile> OpenInputFile(const std::string& path, uint64_t max_bytes,
                                      std::string_view limited);
std::unexpected<core::Error> TooLargeFile(const std::string& path, uint64_t size,
                                          uint64_t max_bytes, std::string_view limited);

// Parses YAML text; syntax errors become "<source>:<line>:<col>: <message>".
// Text over core::kMaxInputBytes is refused, as ReadFile refuses a file.
// Text over core::kYamlScanBytes is refused when it has more than
// core::kMaxYamlNodes nodes, so memory stays bounded: unless YamlNodeBound
// already keeps it within the limit, it is first scanned (a yaml-cpp event
// pass that counts the nodes). Text with an anchor (`&`) is scanned too,
// and refused when its aliases make it stand for more than that many
// nodes, or for too many through aliases (ExcessiveAliasing), so what
// reads the tree stays linear in the file. (Tests pass smaller limits.)
core::Result<YAML::Node> ParseYaml(const std::string& text, const std::string& source,
                                   int64_t max_nodes = core::kMaxYamlNodes,
                                   size_t scan_above = core::kYamlScanBytes);

// The nodes yaml-cpp's event pass emits for `text` (all its documents; a
// null, scalar, alias, map or sequence each), counted up to a syntax error
// and at most to max_nodes + 1 (a stream yaml-cpp never ends stops there).
int64_t CountYamlNodes(const std::string& text, int64_t max_nodes);

// The nodes of `text` as CountYamlNodes counts them, and as a reader of
// the tree meets them: yaml-cpp shares the node an alias (*name) names,
// but whoever walks the tree reads it again at each alias, so there an
// alias counts as every node it repeats (`expanded`; `aliased` of them
// through aliases). Counted until a syntax error or either count is over
// its maximum.
struct YamlCount {
  int64_t nodes = 0;
  int64_t expanded = 0;
  int64_t aliased = 0;
};
YamlCount CountYamlExpansion(const std::string& text, int64_t max_nodes, int64_t max_expanded);

// The share of a document of `expanded` nodes that may come from aliases,
// as Kubernetes' YAML decoder (go-yaml) allows it: 99% up to 400,000
// nodes, falling linearly to 10% at 4,000,000 and beyond. A few aliases
// that reuse a block are fine; a small file that stands for a huge one
// ("billion laughs") is not.
double AllowedAliasShare(int64_t expanded);
// More than 100 nodes from aliases, more than 1,000 in all, and more than
// that share of them from aliases.
bool ExcessiveAliasing(const YamlCount& count);

// True when the bytes of `text` show it is one YAML document whose root is
// a block map with its keys at column 0: its first line that is not blank
// or a comment starts with a plain key (`jobs:`), no line starts with a
// document marker (---, ...) or a directive (%), and there is no NUL byte
// (which could make yaml-cpp read it as UTF-16 or UTF-32). Such a map ends
// only with the text (or an error), so yaml-cpp sees no second document.
bool IsOneBlockMap(std::string_view text);

// An upper bound on the nodes yaml-cpp's event pass counts in `text` (see
// the argument in yaml_util.cc), from its bytes alone; nullopt when there is
// none this cheap (the text is not IsOneBlockMap).
std::optional<int64_t> YamlNodeBound(std::string_view text);

// Whether ParseYaml runs its counting pass over `text` before loading it:
// it is longer than `scan_above` and YamlNodeBound does not keep it within
// `max_nodes`.
bool NeedsNodeScan(std::string_view text, int64_t max_nodes, size_t scan_above);

// YAML values as the field reader reads them: numbers and booleans are
// scalars in their plain forms (an integer in decimal digits; a number as
// from_chars reads it, a leading '+' allowed; true/false, yes/no, on/off).
// As the job decoder (job_decoder.h) walks them: a field is given unless
// absent or null (Given), a string is any scalar.
struct YamlFields {
  using Value = YAML::Node;
  static constexpr FieldWording kWording{IntegerBetween, NumberInterval};
  static std::string Describe(const YAML::Node& node) { return internal::Describe(node); }
  static std::optional<int64_t> ToInt(const YAML::Node& node);
  static std::optional<double> ToNumber(const YAML::Node& node);
  static std::optional<bool> ToBool(const YAML::Node& node);

  using Field = std::optional<YAML::Node>;
  static Field Find(const YAML::Node& map, std::string_view key) {
    const YAML::Node n = map[std::string(key)];
    if (!Given(n)) return std::nullopt;
    return n;
  }
  static std::optional<std::string> Text(const YAML::Node& node) {
    if (!node.IsScalar()) return std::nullopt;
    return node.Scalar();
  }
  template <typename Fn>
  static core::Status ForEachEntry(const YAML::Node& map, Fn fn) {
    for (const auto& kv : map) DLSCHED_TRY(fn(kv.first, kv.second));
    return {};
  }
};

// The parsing context of one YAML input: knows its name and formats errors
// (FieldReader: Fail, Expected, Missing; Int, with counts' default and
// unstated upper bound kMaxInt, as counts fit in an int; Number; Bool).
class Reader : public FieldReader<YamlFields> {
 public:
  explicit Reader(std::string source) : FieldReader(std::move(source)) {}

  // Checks that `node` is a map (`what` names it in the error) whose keys are
  // unique scalars from `allowed`; an unknown key is reported with the list of
  // allowed keys, so typos are caught.
  core::Status CheckMap(const YAML::Node& node, std::string_view path, std::string_view what,
                        std::initializer_list<std::string_view> allowed) const;
  // Checks that `node` is a map with unique scalar keys (any names).
  core::Status CheckAnyMap(const YAML::Node& node, std::string_view path,
                           std::string_view what) const;

  // A non-empty scalar.
  core::Result<std::string> String(const YAML::Node& node, std::string_view path) const;
  // A name of a job, node, namespace, queue or label (core::NameProblem).
  core::Result<std::string> Name(const YAML::Node& node, std::string_view path) const;
  // A map of resource name -> Kubernetes quantity (YAML string or number),
  // interned and converted to canonical units, each at most core::kMaxAmount.
  core::Result<core::Resources> Resources(const YAML::Node& node, std::string_view path) const;
  // One quantity of resource `id`, in canonical units, at most
  // core::kMaxAmount.
  core::Result<int64_t> Amount(core::ResourceId id, const YAML::Node& node,
                               std::string_view path) const;
};

// Converts the YAML exceptions that escape the parsers (there should be none,
// but yaml-cpp throws from unexpected places) into one-line errors. Called
// only in a catch block: out of memory (std::bad_alloc) is not an error in
// the input, and is rethrown for the process's edge to report (cli::Main:
// "out of memory", exit 1) rather than returned as "<source>:
// std::bad_alloc" (exit 2, bad input).
core::Error FromException(const std::string& source, const std::exception& e);

// Parses YAML `text` and hands the root to `parse(reader, root)`; any
// exception becomes a one-line error. The shared body of every Parse*.
template <typename Parse>
auto ParseText(const std::string& text, const std::string& source, Parse parse)
    -> decltype(parse(Reader(source), YAML::Node())) {
  try {
    DLSCHED_TRY_LET(root, ParseYaml(text, source));
    return parse(Reader(source), *root);
  } catch (const std::exception& e) {
    return std::unexpected(FromException(source, e));
  }
}

// Reads the file at `path` and hands its text to `parse(text, path)`.
template <typename Parse>
auto LoadFile(const std::string& path, Parse parse)
    -> decltype(parse(std::string(), std::string())) {
  DLSCHED_TRY_LET(text, ReadFile(path));
  return parse(*text, path);
}

}  // namespace dlsched::config::internal
