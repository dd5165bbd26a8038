// AscendString: the string type of the UDF API (attribute values, func names). It holds its own
// bytes in a std::vector, so it crosses between a UDF library and the runtime whatever
// _GLIBCXX_USE_CXX11_ABI either was built with.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flow_func_defines.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY AscendString {
 public:
  AscendString() : text_(1, '\0') {}
  ~AscendString() = default;
  // A copy of `name` up to its NUL; nullptr gives "".
  AscendString(const char* const name) : AscendString(name, name == nullptr ? 0U : std::strlen(name)) {}
  // A copy of `length` bytes at `name` (which may hold NULs); nullptr gives "".
  AscendString(const char* const name, size_t length) {
    if (name == nullptr) length = 0U;
    text_.assign(name, name + length);
    text_.push_back('\0');
  }

  // The bytes, NUL-terminated.
  const char* GetString() const { return text_.data(); }
  size_t GetLength() const { return text_.size() - 1U; }

  bool operator<(const AscendString& other) const { return Compare(other) < 0; }
  bool operator>(const AscendString& other) const { return Compare(other) > 0; }
  bool operator<=(const AscendString& other) const { return Compare(other) <= 0; }
  bool operator>=(const AscendString& other) const { return Compare(other) >= 0; }
  bool operator==(const AscendString& other) const { return Compare(other) == 0; }
  bool operator!=(const AscendString& other) const { return Compare(other) != 0; }

 private:
  // Byte order, then length (as std::string compares).
  int Compare(const AscendString& other) const {
    const size_t common = GetLength() < other.GetLength() ? GetLength() : other.GetLength();
    const int bytes = common == 0U ? 0 : std::memcmp(GetString(), other.GetString(), common);
    if (bytes != 0) return bytes;
    return GetLength() < other.GetLength() ? -1 : (GetLength() > other.GetLength() ? 1 : 0);
  }

  std::vector<char> text_;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_
