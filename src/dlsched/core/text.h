#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dlsched::core {

// Makes user text safe to show on one line of a terminal or a log: valid
// UTF-8 passes unchanged; invalid bytes, control characters (C0, DEL, C1)
// and the Unicode line and paragraph separators become \xNN (the bytes as
// written), so no newline or terminal escape sequence gets through. Text
// longer than `max_bytes` is cut at a character boundary and ends in "...".
std::string EscapeText(std::string_view text, size_t max_bytes = 200);

// A message for one line of stderr: escaped as EscapeText escapes, and,
// when longer than `max_bytes`, shortened in the middle: its start (which
// names the file or flag and the field) and its end (which says what was
// wrong) are kept, joined by " ... ". (Cutting the end lost the reason of a
// message echoing a long --set.)
std::string EscapeMessage(std::string_view text, size_t max_bytes = 4096);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or
// code points above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// Why `name` is not acceptable as the name of a job, node, namespace, queue
// or label, or nullopt when it is: names are 1..kMaxNameBytes bytes of UTF-8
// without control characters. (Kubernetes is stricter for its own objects;
// the operator checks those rules where names become object names.)
std::optional<std::string> NameProblem(std::string_view name);

// The candidate closest to `word`, an unknown name the user typed, when one
// is close enough to be what was meant: the fewest single-character edits
// (insert, delete, replace, swap two neighbours; letters compared without
// case), at most 1 for words of up to 5 characters, 2 up to 8, else 3.
// Ties go to the earlier candidate; nullopt when none is that close.
std::optional<std::string_view> ClosestName(std::string_view word,
                                            std::span<const std::string_view> candidates);

// "; did you mean 'X'?" for ClosestName's X, or "" when there is none: the
// end of an error message about an unknown name.
std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace dlsched::core
