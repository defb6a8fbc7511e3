// A JSON Schema (draft 2020-12) validator for the subset kvsweep's schemas use: type (one or a
// list), const, enum, required, properties, additionalProperties (bool or schema), items,
// minimum, oneOf and local $ref ("#/$defs/name"). Anything else in a schema is an error, so a
// schema cannot silently use a keyword this validator ignores.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::testing {

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json root) : root_(std::move(root)) {}

  // Every violation as "path: reason"; empty when the document is valid.
  std::vector<std::string> validate(const nlohmann::json& doc) const {
    std::vector<std::string> errors;
    check(root_, doc, "$", &errors);
    return errors;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    return false;
  }

  const nlohmann::json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  void check(const nlohmann::json& schema, const nlohmann::json& v, const std::string& path,
             std::vector<std::string>* errors) const {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors->push_back(path + ": not allowed");
      return;
    }
    for (const auto& [key, rule] : schema.items()) {
      if (key == "$schema" || key == "$id" || key == "title" || key == "description" ||
          key == "$defs") {
        continue;
      } else if (key == "$ref") {
        check(resolve(rule.get<std::string>()), v, path, errors);
      } else if (key == "type") {
        bool ok = false;
        if (rule.is_string()) ok = has_type(v, rule);
        for (const auto& t : rule.is_array() ? rule : nlohmann::json::array()) ok |= has_type(v, t);
        if (!ok) errors->push_back(path + ": expected type " + rule.dump() + ", got " + v.dump());
      } else if (key == "const") {
        if (v != rule) errors->push_back(path + ": expected " + rule.dump());
      } else if (key == "enum") {
        if (std::find(rule.begin(), rule.end(), v) == rule.end()) {
          errors->push_back(path + ": " + v.dump() + " not in " + rule.dump());
        }
      } else if (key == "minimum") {
        if (v.is_number() && v.get<double>() < rule.get<double>()) {
          errors->push_back(path + ": below minimum " + rule.dump());
        }
      } else if (key == "required") {
        for (const auto& name : rule) {
          if (v.is_object() && !v.contains(name.get<std::string>())) {
            errors->push_back(path + ": missing required \"" + name.get<std::string>() + "\"");
          }
        }
      } else if (key == "properties") {
        if (!v.is_object()) continue;
        for (const auto& [name, sub] : rule.items()) {
          if (v.contains(name)) check(sub, v.at(name), path + "." + name, errors);
        }
      } else if (key == "additionalProperties") {
        if (!v.is_object()) continue;
        const auto props = schema.value("properties", nlohmann::json::object());
        for (const auto& [name, value] : v.items()) {
          if (!props.contains(name)) check(rule, value, path + "." + name, errors);
        }
      } else if (key == "items") {
        if (!v.is_array()) continue;
        for (std::size_t i = 0; i < v.size(); ++i) {
          check(rule, v[i], path + "[" + std::to_string(i) + "]", errors);
        }
      } else if (key == "oneOf") {
        int matches = 0;
        for (const auto& sub : rule) {
          std::vector<std::string> sub_errors;
          check(sub, v, path, &sub_errors);
          matches += sub_errors.empty();
        }
        if (matches != 1) {
          errors->push_back(path + ": matches " + std::to_string(matches) + " of oneOf, need 1");
        }
      } else {
        throw std::runtime_error("schema keyword \"" + key + "\" not supported by this validator");
      }
    }
  }

  nlohmann::json root_;
};

}  // namespace kvsweep::testing
