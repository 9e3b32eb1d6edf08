// tests/kit/strict_json.hpp: a strict JSON (RFC 8259) reader for the
// tests that check what ChromeTrace writes: it throws on anything else.
#pragma once

#include <cctype>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strict_json {

// The reader: throws on anything else (trailing
// commas, bare words, unescaped control characters, trailing text).
struct Json {
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v;
  const Json& operator[](const std::string& k) const { return std::get<Object>(v).at(k); }
  const Array& array() const { return std::get<Array>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  double num() const { return std::get<double>(v); }
  bool has(const std::string& k) const { return std::get<Object>(v).count(k) != 0; }
};

class Reader {
 public:
  explicit Reader(std::string s) : s_(std::move(s)) {}
  Json document() {
    Json j = value();
    ws();
    if (i_ != s_.size()) fail("trailing text");
    return j;
  }

 private:
  [[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string(what) + " at " + std::to_string(i_)); }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++i_;
  }
  void word(const char* w) {
    for (; *w; ++w) expect(*w);
  }
  Json value() {
    ws();
    switch (peek()) {
      case '{': {
        ++i_;
        Json::Object o;
        ws();
        if (peek() == '}') return ++i_, Json{o};
        for (;;) {
          ws();
          std::string k = string();
          ws();
          expect(':');
          if (!o.emplace(k, value()).second) fail("duplicate key");
          ws();
          if (peek() == '}') return ++i_, Json{o};
          expect(',');
        }
      }
      case '[': {
        ++i_;
        Json::Array a;
        ws();
        if (peek() == ']') return ++i_, Json{a};
        for (;;) {
          a.push_back(value());
          ws();
          if (peek() == ']') return ++i_, Json{a};
          expect(',');
        }
      }
      case '"': return Json{string()};
      case 't': return word("true"), Json{true};
      case 'f': return word("false"), Json{false};
      case 'n': return word("null"), Json{nullptr};
      default: return Json{number()};
    }
  }
  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = s_[i_++];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k)
          if (!std::isxdigit(static_cast<unsigned char>(peek()))) fail("bad \\u escape");
          else ++i_;
        out += '?';
      } else if (const auto k = std::string_view("\"\\/bfnrt").find(e); k != std::string_view::npos) {
        out += "\"\\/\b\f\n\r\t"[k];
      } else {
        fail("bad escape");
      }
    }
  }
  double number() {
    const std::size_t start = i_;
    if (peek() == '-') ++i_;
    if (peek() == '0') ++i_;
    else if (std::isdigit(static_cast<unsigned char>(peek()))) while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    else fail("not a value");
    if (peek() == '.') {
      ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("bad fraction");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("bad exponent");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    }
    return std::stod(s_.substr(start, i_ - start));
  }
  std::string s_;
  std::size_t i_ = 0;
};

}  // namespace strict_json
