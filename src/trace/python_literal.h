#pragma once
// A Python literal as DistServe's benchmark writes its .exp results: None, True/False, numbers
// (nan, inf), quoted strings, lists/tuples and dicts, '#' comments. A small recursive-descent
// reader (python_literal.cpp); replay_readers.cpp turns the value into a RealRun.

#include <string>
#include <utility>
#include <vector>

namespace kvsim::trace {

// One value, with the 1-based line and column where it starts.
struct PyValue {
  enum class Kind { kNone, kBool, kNumber, kString, kList, kDict } kind = Kind::kNone;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<PyValue> items;     // list
  std::vector<std::string> keys;  // dict, in file order
  std::vector<PyValue> values;    // dict, values[i] under keys[i]
  int line = 0, column = 0;
};

// Parses `text` (read from `file`): the literal, then an optional summary block
// "{\n\tkey: number\n ...}" (DistServe's benchmark writes one) whose numbers are appended to
// `summary`. Throws kvsim::Error at file:line:col on malformed input or trailing text.
PyValue parse_python_literal(const std::string& text, const std::string& file,
                             std::vector<std::pair<std::string, double>>& summary);

// The value under `key` in dict `d`; nullptr when absent.
const PyValue* dict_get(const PyValue& d, const std::string& key);

}  // namespace kvsim::trace
