//===- ChatTemplateRenderer.cpp - Chat template tree to text --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Values are JSON (keys in order) or Jinja's undefined; printing follows
// Python's str() (True, None, 2.0, {'a': 1}) and tojson Python's
// json.dumps with transformers' settings. `set` in a loop's body stays in
// it, as in Jinja; namespace() objects carry values out.
//
//===----------------------------------------------------------------------===//

#include "ChatTemplateSyntax.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace dtensor::tooling::jinja {

namespace {

/// A value: JSON, or Jinja's undefined.
struct Value {
  json data;
  bool undefined = false;
  static Value missing() {
    Value value;
    value.undefined = true;
    return value;
  }
};

bool truthy(const Value &value) {
  if (value.undefined)
    return false;
  const json &data = value.data;
  switch (data.type()) {
  case json::value_t::null:
    return false;
  case json::value_t::boolean:
    return data.get<bool>();
  case json::value_t::string:
    // json::empty() is false for every string.
    return !data.get_ref<const std::string &>().empty();
  case json::value_t::array:
  case json::value_t::object:
    return !data.empty();
  case json::value_t::number_float:
    return data.get<double>() != 0;
  default:
    return data.get<int64_t>() != 0;
  }
}

std::string pythonFloat(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  // The shortest form that reads back the same, as Python's repr.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", digits, value);
    if (std::stod(shorter) == value) {
      std::snprintf(text, sizeof(text), "%s", shorter);
      break;
    }
  }
  std::string result = text;
  if (result.find_first_of(".enI") == std::string::npos)
    result += ".0";
  return result;
}

std::string repr(const json &data);

/// Python's str() of a value.
std::string toText(const Value &value) {
  if (value.undefined)
    return "";
  const json &data = value.data;
  if (data.is_string())
    return data.get<std::string>();
  if (data.is_boolean())
    return data.get<bool>() ? "True" : "False";
  if (data.is_null())
    return "None";
  if (data.is_number_float())
    return pythonFloat(data.get<double>());
  if (data.is_number())
    return data.dump();
  return repr(data);
}

/// Python's repr() of a value ({'a': [1, 'b']}).
std::string repr(const json &data) {
  if (data.is_string()) {
    std::string text = "'";
    for (char c : data.get<std::string>()) {
      if (c == '\'' || c == '\\')
        text += '\\';
      if (c == '\n') {
        text += "\\n";
        continue;
      }
      text += c;
    }
    return text + "'";
  }
  if (data.is_array()) {
    std::string text = "[";
    for (size_t i = 0; i < data.size(); ++i)
      text += (i ? ", " : "") + repr(data[i]);
    return text + "]";
  }
  if (data.is_object()) {
    std::string text = "{";
    bool first = true;
    for (const auto &item : data.items()) {
      text += (first ? "" : ", ") + repr(json(item.key())) + ": " +
              repr(item.value());
      first = false;
    }
    return text + "}";
  }
  Value value;
  value.data = data;
  return toText(value);
}

/// Python's json.dumps(value, ensure_ascii=False), transformers' tojson
/// (", " and ": " separators; `indent` spaces a level when given).
std::string pythonJson(const json &data, int indent, int depth = 0) {
  std::string newline =
      indent > 0 ? "\n" + std::string((depth + 1) * indent, ' ') : "";
  std::string closing =
      indent > 0 ? "\n" + std::string(depth * indent, ' ') : "";
  std::string separator = indent > 0 ? "," : ", ";
  if (data.is_array()) {
    if (data.empty())
      return "[]";
    std::string text = "[";
    for (size_t i = 0; i < data.size(); ++i)
      text += (i ? separator : "") + newline +
              pythonJson(data[i], indent, depth + 1);
    return text + closing + "]";
  }
  if (data.is_object()) {
    if (data.empty())
      return "{}";
    std::string text = "{";
    bool first = true;
    for (const auto &item : data.items()) {
      text += (first ? "" : separator) + newline + json(item.key()).dump() +
              ": " + pythonJson(item.value(), indent, depth + 1);
      first = false;
    }
    return text + closing + "}";
  }
  if (data.is_number_float())
    return pythonFloat(data.get<double>());
  return data.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string strip(const std::string &text, const std::string &chars, bool left,
                  bool right) {
  size_t begin = left ? text.find_first_not_of(chars) : 0;
  if (begin == std::string::npos)
    return "";
  size_t end = right ? text.find_last_not_of(chars) : text.size() - 1;
  return text.substr(begin, end - begin + 1);
}

const char *const kWhitespace = " \t\n\r\f\v";

Value make(json data) {
  Value value;
  value.data = std::move(data);
  return value;
}

class Renderer {
public:
  explicit Renderer(const json &variables) {
    scopes_.emplace_back();
    for (const auto &item : variables.items())
      scopes_.back()[item.key()] = make(item.value());
  }

  void render(const Node &node, std::string &out) {
    switch (node.kind) {
    case Node::Sequence:
      for (const NodePtr &child : node.children)
        render(*child, out);
      return;
    case Node::Text:
      out += node.text;
      return;
    case Node::Output:
      out += toText(evaluate(*node.children[0]));
      return;
    case Node::If:
      for (size_t i = 0; i + 1 < node.children.size(); i += 2)
        if (truthy(evaluate(*node.children[i]))) {
          render(*node.children[i + 1], out);
          return;
        }
      return;
    case Node::For:
      return renderFor(node, out);
    case Node::Set: {
      Value value = evaluate(*node.children[0]);
      if (node.targets.size() == 1) {
        scopes_.back()[node.targets[0]] = value;
        return;
      }
      Value *object = lookup(node.targets[0]);
      if (!object || !object->data.is_object())
        fail(node.line, "'" + node.targets[0] + "' is not a namespace");
      object->data[node.targets[1]] = value.data;
      return;
    }
    default:
      fail(node.line, "not a statement");
    }
  }

private:
  Value *lookup(const std::string &name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto found = scope->find(name);
      if (found != scope->end())
        return &found->second;
    }
    return nullptr;
  }

  void renderFor(const Node &node, std::string &out) {
    Value iterable = evaluate(*node.children[0]);
    json items = json::array();
    if (iterable.undefined || iterable.data.is_null())
      return;
    if (iterable.data.is_array())
      items = iterable.data;
    else if (iterable.data.is_object())
      for (const auto &item : iterable.data.items())
        items.push_back(item.key());
    else if (iterable.data.is_string())
      for (char c : iterable.data.get<std::string>())
        items.push_back(std::string(1, c));
    else
      fail(node.line, "cannot loop over " + repr(iterable.data));
    // Assignments in a loop's body stay in it, as in Jinja.
    scopes_.emplace_back();
    for (size_t i = 0; i < items.size(); ++i) {
      auto &scope = scopes_.back();
      scope.clear();
      if (node.targets.size() == 2) {
        if (!items[i].is_array() || items[i].size() != 2)
          fail(node.line, "cannot unpack " + repr(items[i]) + " into " +
                              node.targets[0] + ", " + node.targets[1]);
        scope[node.targets[0]] = make(items[i][0]);
        scope[node.targets[1]] = make(items[i][1]);
      } else {
        scope[node.targets[0]] = make(items[i]);
      }
      int64_t n = static_cast<int64_t>(items.size()),
              index = static_cast<int64_t>(i);
      scope["loop"] = make({{"index", index + 1},
                            {"index0", index},
                            {"revindex", n - index},
                            {"revindex0", n - index - 1},
                            {"first", i == 0},
                            {"last", index == n - 1},
                            {"length", n}});
      render(*node.children[1], out);
    }
    scopes_.pop_back();
  }

  Value evaluate(const Node &node) {
    switch (node.kind) {
    case Node::Literal:
      return node.text == "undefined" ? Value::missing() : make(node.literal);
    case Node::Name: {
      Value *value = lookup(node.text);
      return value ? *value : Value::missing();
    }
    case Node::List: {
      json list = json::array();
      for (const NodePtr &child : node.children)
        list.push_back(evaluate(*child).data);
      return make(list);
    }
    case Node::Dict: {
      json dict = json::object();
      for (size_t i = 0; i + 1 < node.children.size(); i += 2)
        dict[toText(evaluate(*node.children[i]))] =
            evaluate(*node.children[i + 1]).data;
      return make(dict);
    }
    case Node::Attribute:
      return attribute(evaluate(*node.children[0]), node.text, node.line);
    case Node::Index:
      return index(evaluate(*node.children[0]), evaluate(*node.children[1]),
                   node.line);
    case Node::Slice:
      return slice(node);
    case Node::Call:
      return call(node);
    case Node::Filter:
      return filter(node);
    case Node::Test: {
      bool result = test(node.text, evaluate(*node.children[0]));
      return make(node.negated ? !result : result);
    }
    case Node::Not:
      return make(!truthy(evaluate(*node.children[0])));
    case Node::Negate: {
      Value value = evaluate(*node.children[0]);
      if (!value.data.is_number())
        fail(node.line, "cannot negate " + repr(value.data));
      return value.data.is_number_float() ? make(-value.data.get<double>())
                                          : make(-value.data.get<int64_t>());
    }
    case Node::Ternary:
      return truthy(evaluate(*node.children[1])) ? evaluate(*node.children[0])
                                                 : evaluate(*node.children[2]);
    case Node::Binary:
      return binary(node);
    default:
      fail(node.line, "not an expression");
    }
  }

  Value attribute(const Value &object, const std::string &name, int line) {
    if (object.undefined)
      return Value::missing();
    if (object.data.is_object()) {
      auto found = object.data.find(name);
      if (found != object.data.end())
        return make(*found);
    }
    (void)line;
    // Methods are resolved by call(); anything else is undefined.
    return Value::missing();
  }

  Value index(const Value &object, const Value &key, int line) {
    if (object.undefined)
      return Value::missing();
    if (object.data.is_object() && key.data.is_string()) {
      auto found = object.data.find(key.data.get<std::string>());
      return found == object.data.end() ? Value::missing() : make(*found);
    }
    if ((object.data.is_array() || object.data.is_string()) &&
        key.data.is_number_integer()) {
      int64_t size =
          object.data.is_array()
              ? static_cast<int64_t>(object.data.size())
              : static_cast<int64_t>(object.data.get<std::string>().size());
      int64_t i = key.data.get<int64_t>();
      if (i < 0)
        i += size;
      if (i < 0 || i >= size)
        return Value::missing();
      return object.data.is_array()
                 ? make(object.data[i])
                 : make(std::string(1, object.data.get<std::string>()[i]));
    }
    fail(line, "cannot index " + repr(object.data) + " with " + repr(key.data));
  }

  Value slice(const Node &node) {
    Value object = evaluate(*node.children[0]);
    bool isString = object.data.is_string();
    if (!object.data.is_array() && !isString)
      fail(node.line, "cannot slice " + repr(object.data));
    int64_t size =
        isString ? static_cast<int64_t>(object.data.get<std::string>().size())
                 : static_cast<int64_t>(object.data.size());
    auto bound = [&](const NodePtr &expression, int64_t fallback) {
      if (!expression)
        return fallback;
      Value value = evaluate(*expression);
      if (!value.data.is_number_integer())
        fail(node.line, "a slice bound must be an integer");
      int64_t i = value.data.get<int64_t>();
      if (i < 0)
        i += size;
      return std::min(std::max<int64_t>(i, 0), size);
    };
    int64_t start = bound(node.children[1], 0);
    int64_t stop = std::max(start, bound(node.children[2], size));
    if (isString)
      return make(object.data.get<std::string>().substr(start, stop - start));
    json list = json::array();
    for (int64_t i = start; i < stop; ++i)
      list.push_back(object.data[i]);
    return make(list);
  }

  Value call(const Node &node) {
    const Node &callee = *node.children[0];
    std::vector<Value> args;
    for (size_t i = 1; i < node.children.size(); ++i)
      args.push_back(evaluate(*node.children[i]));
    auto argument = [&](size_t i) -> const json & {
      static const json none;
      return i < args.size() ? args[i].data : none;
    };
    if (callee.kind == Node::Name) {
      const std::string &name = callee.text;
      if (name == "raise_exception")
        throw Failure{"the chat template raised: " + toText(args.at(0))};
      if (name == "namespace") {
        json object = json::object();
        for (const auto &[key, value] : node.keywords)
          object[key] = evaluate(*value).data;
        return make(object);
      }
      if (name == "range") {
        int64_t start = 0, stop = 0;
        if (args.size() == 1)
          stop = argument(0).get<int64_t>();
        else if (args.size() == 2) {
          start = argument(0).get<int64_t>();
          stop = argument(1).get<int64_t>();
        }
        json list = json::array();
        for (int64_t i = start; i < stop; ++i)
          list.push_back(i);
        return make(list);
      }
      Value *function = lookup(name);
      if (!function)
        fail(node.line, "'" + name +
                            "' is undefined (the functions are "
                            "raise_exception, namespace, range)");
      fail(node.line, "'" + name + "' is not a function");
    }
    if (callee.kind != Node::Attribute)
      fail(node.line, "only functions and methods can be called");
    Value object = evaluate(*callee.children[0]);
    const std::string &method = callee.text;
    const json &data = object.data;
    if (data.is_string()) {
      const std::string &text = data.get_ref<const std::string &>();
      std::string chars = argument(0).is_string()
                              ? argument(0).get<std::string>()
                              : std::string(kWhitespace);
      if (method == "strip")
        return make(strip(text, chars, true, true));
      if (method == "lstrip")
        return make(strip(text, chars, true, false));
      if (method == "rstrip")
        return make(strip(text, chars, false, true));
      if (method == "upper" || method == "lower") {
        std::string result = text;
        for (char &c : result)
          c = static_cast<char>(method == "upper" ? std::toupper(c)
                                                  : std::tolower(c));
        return make(result);
      }
      if (method == "startswith" || method == "endswith") {
        std::string affix = argument(0).get<std::string>();
        bool result =
            text.size() >= affix.size() &&
            text.compare(method == "startswith" ? 0
                                                : text.size() - affix.size(),
                         affix.size(), affix) == 0;
        return make(result);
      }
      if (method == "split") {
        json parts = json::array();
        if (argument(0).is_string()) {
          std::string separator = argument(0).get<std::string>();
          size_t from = 0, found;
          while ((found = text.find(separator, from)) != std::string::npos) {
            parts.push_back(text.substr(from, found - from));
            from = found + separator.size();
          }
          parts.push_back(text.substr(from));
        } else {
          size_t from = text.find_first_not_of(kWhitespace);
          while (from != std::string::npos) {
            size_t end = text.find_first_of(kWhitespace, from);
            parts.push_back(text.substr(from, end - from));
            from = end == std::string::npos
                       ? end
                       : text.find_first_not_of(kWhitespace, end);
          }
        }
        return make(parts);
      }
    }
    if (data.is_object()) {
      if (method == "items") {
        json pairs = json::array();
        for (const auto &item : data.items())
          pairs.push_back({item.key(), item.value()});
        return make(pairs);
      }
      if (method == "keys" || method == "values") {
        json list = json::array();
        for (const auto &item : data.items())
          list.push_back(method == "keys" ? json(item.key()) : item.value());
        return make(list);
      }
      if (method == "get") {
        auto found = data.find(argument(0).get<std::string>());
        if (found != data.end())
          return make(*found);
        return args.size() > 1 ? args[1] : make(nullptr);
      }
    }
    fail(node.line,
         "the method '" + method + "' of " + repr(data) + " is not supported");
  }

  Value filter(const Node &node) {
    Value value = evaluate(*node.children[0]);
    const std::string &name = node.text;
    const json &data = value.data;
    if (name == "default") {
      bool replace = value.undefined;
      if (node.children.size() > 2)
        replace |= !truthy(value) && truthy(evaluate(*node.children[2]));
      return replace ? (node.children.size() > 1 ? evaluate(*node.children[1])
                                                 : make(""))
                     : value;
    }
    if (value.undefined && name != "length" && name != "count")
      fail(node.line, "the filter '" + name + "' of an undefined value");
    if (name == "trim")
      return make(strip(toText(value), kWhitespace, true, true));
    if (name == "length" || name == "count") {
      if (data.is_string())
        return make(static_cast<int64_t>(
            data.get<std::string>().size())); // bytes; ASCII templates
      return make(static_cast<int64_t>(value.undefined ? 0 : data.size()));
    }
    if (name == "tojson") {
      int indent = 0;
      for (const auto &[key, argument] : node.keywords)
        if (key == "indent")
          indent = static_cast<int>(evaluate(*argument).data.get<int64_t>());
      return make(pythonJson(data, indent));
    }
    if (name == "upper" || name == "lower" || name == "capitalize") {
      std::string text = toText(value);
      for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<char>(name == "upper" ||
                                            (name == "capitalize" && i == 0)
                                        ? std::toupper(text[i])
                                        : std::tolower(text[i]));
      return make(text);
    }
    if (name == "string")
      return make(toText(value));
    if (name == "int")
      return make(data.is_number() ? static_cast<int64_t>(data.get<double>())
                                   : std::stoll(toText(value)));
    if (name == "first" || name == "last") {
      if (!data.is_array() || data.empty())
        return Value::missing();
      return make(name == "first" ? data.front() : data.back());
    }
    if (name == "join") {
      std::string separator =
          node.children.size() > 1 ? toText(evaluate(*node.children[1])) : "";
      std::string text;
      for (size_t i = 0; i < data.size(); ++i)
        text += (i ? separator : "") + toText(make(data[i]));
      return make(text);
    }
    if (name == "items") {
      json pairs = json::array();
      for (const auto &item : data.items())
        pairs.push_back({item.key(), item.value()});
      return make(pairs);
    }
    fail(node.line, "the filter '" + name + "' is not supported");
  }

  bool test(const std::string &name, const Value &value) {
    const json &data = value.data;
    if (name == "defined")
      return !value.undefined;
    if (name == "undefined")
      return value.undefined;
    if (value.undefined)
      return false;
    if (name == "none")
      return data.is_null();
    if (name == "string")
      return data.is_string();
    if (name == "number")
      return data.is_number();
    if (name == "integer")
      return data.is_number_integer();
    if (name == "boolean")
      return data.is_boolean();
    if (name == "mapping")
      return data.is_object();
    if (name == "iterable" || name == "sequence")
      return data.is_array() || data.is_string() ||
             (name == "iterable" && data.is_object());
    if (name == "true")
      return data.is_boolean() && data.get<bool>();
    return data.is_boolean() && !data.get<bool>(); // "false"
  }

  Value binary(const Node &node) {
    const std::string &op = node.text;
    if (op == "and") {
      Value left = evaluate(*node.children[0]);
      return truthy(left) ? evaluate(*node.children[1]) : left;
    }
    if (op == "or") {
      Value left = evaluate(*node.children[0]);
      return truthy(left) ? left : evaluate(*node.children[1]);
    }
    Value left = evaluate(*node.children[0]);
    Value right = evaluate(*node.children[1]);
    const json &a = left.data, &b = right.data;
    if (op == "~")
      return make(toText(left) + toText(right));
    if (op == "==" || op == "!=") {
      bool equal = left.undefined || right.undefined
                       ? left.undefined == right.undefined
                       : a == b;
      return make(op == "==" ? equal : !equal);
    }
    if (op == "in" || op == "not in") {
      bool found = false;
      if (b.is_string() && a.is_string())
        found = b.get<std::string>().find(a.get<std::string>()) !=
                std::string::npos;
      else if (b.is_array())
        found = std::find(b.begin(), b.end(), a) != b.end();
      else if (b.is_object() && a.is_string())
        found = b.contains(a.get<std::string>());
      else if (!right.undefined && !b.is_null())
        fail(node.line, "'in' needs a string, list or mapping on its right, "
                        "not " +
                            repr(b));
      return make(op == "in" ? found : !found);
    }
    if (op == "+" && a.is_string() && b.is_string())
      return make(a.get<std::string>() + b.get<std::string>());
    if (op == "+" && a.is_array() && b.is_array()) {
      json list = a;
      list.insert(list.end(), b.begin(), b.end());
      return make(list);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      if (!((a.is_number() && b.is_number()) ||
            (a.is_string() && b.is_string())))
        fail(node.line, "cannot compare " + repr(a) + " and " + repr(b));
      bool result = op == "<"    ? a < b
                    : op == ">"  ? b < a
                    : op == "<=" ? !(b < a)
                                 : !(a < b);
      return make(result);
    }
    if (!a.is_number() || !b.is_number())
      fail(node.line, "cannot apply '" + op + "' to " +
                          (left.undefined ? "an undefined value" : repr(a)) +
                          " and " +
                          (right.undefined ? "an undefined value" : repr(b)));
    bool integers = a.is_number_integer() && b.is_number_integer();
    if (op == "/" || !integers) {
      double x = a.get<double>(), y = b.get<double>();
      if ((op == "/" || op == "%") && y == 0)
        fail(node.line, "division by zero");
      return make(op == "+"   ? x + y
                  : op == "-" ? x - y
                  : op == "*" ? x * y
                  : op == "/" ? x / y
                              : x - y * std::floor(x / y));
    }
    int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
    if (op == "%") {
      if (y == 0)
        fail(node.line, "division by zero");
      int64_t r = x % y;
      return make(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
    }
    return make(op == "+" ? x + y : op == "-" ? x - y : x * y);
  }

  std::vector<std::map<std::string, Value>> scopes_;
};

} // namespace

void render(const Node &root, const json &variables, std::string &out) {
  Renderer(variables).render(root, out);
}

} // namespace dtensor::tooling::jinja
