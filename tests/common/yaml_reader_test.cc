// Tests for common/yaml_reader.cc: located errors, typed reads, unknown, duplicate and missing
// keys, one document per file. Each test pins the whole error text a user would read.
#include "common/yaml_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace kvsweep {
namespace {

// A file read through the reader, its errors kept for the test to look at.
struct Read {
  std::vector<YamlError> errors;
  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.text);
    return out;
  }
};

TEST(YamlReader, ReadsTypedValuesAndRecordsWhereEachWasWritten) {
  const std::string text =
      "name: demo\n"
      "count: 3\n"
      "rate: 2.5\n"
      "on: yes\n"
      "kind: b\n"
      "wait: 250ms\n"
      "inner: {x: 1}\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  const auto root = load_yaml_document(text, errors);
  ASSERT_TRUE(root.has_value());
  std::map<std::string, SourceMark> marks;
  YamlMapReader reader(*root, "", errors, &marks);
  std::string name;
  int count = 0;
  double rate = 0;
  bool on = false;
  std::string kind;
  double wait_s = 0;
  reader.read_string("name", &name);
  reader.read_int("count", &count, 1);
  reader.read_double("rate", &rate, 0, false, "a number > 0");
  reader.read_bool("on", &on);
  reader.read_choice("kind", &kind, {"a", "b"});
  reader.read_duration("wait", &wait_s);
  const YAML::Node inner = reader.mapping("inner");
  reader.finish();
  EXPECT_TRUE(r.errors.empty()) << r.texts()[0];
  EXPECT_EQ(name, "demo");
  EXPECT_EQ(count, 3);
  EXPECT_DOUBLE_EQ(rate, 2.5);
  EXPECT_TRUE(on);
  EXPECT_EQ(kind, "b");
  EXPECT_DOUBLE_EQ(wait_s, 0.25);
  EXPECT_TRUE(inner.IsMap());
  EXPECT_EQ(marks.at("rate").line, 3);
  EXPECT_EQ(marks.at("rate").column, 7);
}

TEST(YamlReader, EveryBadValueIsReportedWithItsLineAndCaret) {
  const std::string text =
      "count: 0\n"
      "rate: .nan\n"
      "limit: .inf\n"
      "on: maybe\n"
      "kind: bb\n"
      "wait: soon\n"
      "inner: [1]\n"
      "small: 11\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  const auto root = load_yaml_document(text, errors);
  ASSERT_TRUE(root.has_value());
  YamlMapReader reader(*root, "top", errors);
  int count = 7;
  double rate = 1;
  double limit = 1;
  bool on = false;
  std::string kind = "a";
  double wait_s = 1;
  int small = 0;
  reader.read_int("count", &count, 1);
  reader.read_double("rate", &rate, 0, false, "a number > 0");
  reader.read_double("limit", &limit, 0, false, "a number > 0");
  reader.read_bool("on", &on);
  reader.read_choice("kind", &kind, {"a", "b"});
  reader.read_duration("wait", &wait_s);
  reader.mapping("inner");
  reader.read_int("small", &small, 1, 10);
  reader.finish();
  EXPECT_EQ(r.texts(),
            (std::vector<std::string>{
                "f.yaml:1:8: top.count: expected an integer >= 1, got \"0\"\ncount: 0\n       ^",
                "f.yaml:2:7: top.rate: expected a number > 0, got \".nan\"\nrate: .nan\n      ^",
                "f.yaml:3:8: top.limit: expected a number > 0, got \".inf\"\nlimit: .inf\n       ^",
                "f.yaml:4:5: top.on: expected true or false, got \"maybe\"\non: maybe\n    ^",
                "f.yaml:5:7: top.kind: expected one of a, b, got \"bb\"; did you mean 'b'?\n"
                "kind: bb\n      ^",
                "f.yaml:6:7: top.wait: expected a duration > 0 such as 90s, 5m, 250ms or 30, got "
                "\"soon\"\nwait: soon\n      ^",
                "f.yaml:7:8: top.inner: expected a mapping, got a list\ninner: [1]\n       ^",
                "f.yaml:8:8: top.small: expected an integer from 1 to 10, got \"11\"\nsmall: 11\n"
                "       ^",
            }));
  // A refused value leaves the default in place.
  EXPECT_EQ(count, 7);
  EXPECT_DOUBLE_EQ(rate, 1);
  EXPECT_DOUBLE_EQ(limit, 1);
  EXPECT_EQ(kind, "a");
}

// A byte that is not UTF-8 (found by fuzz_scenario_loader in a level's name, which ended the
// process when the plan wrote the cell's factors as JSON) is refused where it is.
TEST(YamlReader, BytesThatAreNotUtf8AreRefusedWhereTheyAre) {
  const std::string text = "name: ok\nlevels:\n  k8s-ser\xf6ice: {}\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  EXPECT_FALSE(load_yaml_document(text, errors).has_value());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].text.substr(0, r.errors[0].text.find('\n')),
            "f.yaml:3:10: invalid YAML: byte 0xF6 is not UTF-8 (a YAML file is UTF-8 text)");
  // UTF-8 text of any script is read as written.
  const std::string good = "name: caf\xc3\xa9 \xe2\x82\xac\n";
  Read ok;
  YamlErrors none("f.yaml", good, &ok.errors);
  const auto root = load_yaml_document(good, none);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ((*root)["name"].Scalar(), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_TRUE(ok.errors.empty());
}

TEST(YamlReader, UnknownKeySuggestsTheNearestKnownOne) {
  const std::string text = "name: x\nnam: y\nzzz: 1\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  YamlMapReader reader(*load_yaml_document(text, errors), "", errors);
  reader.require("name");
  reader.get("other");
  reader.finish();
  EXPECT_EQ(r.texts(), (std::vector<std::string>{
                           "f.yaml:2:1: nam: unknown key; did you mean 'name'?\nnam: y\n^",
                           "f.yaml:3:1: zzz: unknown key (expected one of: name, other)\n"
                           "zzz: 1\n^",
                       }));
}

TEST(YamlReader, AKeyThatIsNotANameIsReportedAsSuch) {
  const std::string text = "name: x\n: 1\n[a]: 2\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  YamlMapReader reader(*load_yaml_document(text, errors), "", errors);
  reader.require("name");
  reader.finish();
  EXPECT_EQ(r.texts(), (std::vector<std::string>{
                           "f.yaml:2:1: expected a key name before ':', got nothing\n: 1\n^",
                           "f.yaml:3:1: expected a key name before ':', got a list\n[a]: 2\n^",
                       }));
}

TEST(YamlReader, MissingRequiredKeyPointsAtItsMapping) {
  const std::string text = "a: 1\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  YamlMapReader reader(*load_yaml_document(text, errors), "top", errors);
  reader.get("a");
  reader.require("b");
  reader.finish();
  EXPECT_EQ(r.texts(),
            (std::vector<std::string>{"f.yaml:1:1: top.b: required key is missing\na: 1\n^"}));
}

TEST(YamlReader, DuplicateKeysAreReportedAtAnyDepthWithBothPlaces) {
  const std::string text =
      "a: 1\n"
      "b:\n"
      "  - {x: 1, x: 2}\n"
      "a: 3\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  const auto root = load_yaml_document(text, errors);
  ASSERT_TRUE(root.has_value());  // still returned: the caller reports the rest in one pass
  EXPECT_EQ(r.texts(),
            (std::vector<std::string>{
                "f.yaml:3:12: b[0].x: key written twice in one mapping (first at line 3, column "
                "6); only one of them would be used: remove the other\n  - {x: 1, x: 2}\n"
                "           ^",
                "f.yaml:4:1: a: key written twice in one mapping (first at line 1, column 1); "
                "only one of them would be used: remove the other\na: 3\n^",
            }));
}

// Nine lines whose aliases expand to a billion nodes ("billion laughs"). Each line's list holds
// ten of the line before.
std::string alias_bomb() {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char name = 'b'; name <= 'i'; ++name) {
    const std::string previous(1, static_cast<char>(name - 1));
    text += std::string(1, name) + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) text += (i == 0 ? "*" : ", *") + previous;
    text += "]\n";
  }
  return text;
}

// The duplicate-key walk followed aliases with a depth cap but no cap on nodes: a few hundred
// bytes hung every reader (plan, sim serve --epp-config, /admin/strategy). The count is made
// on the parser's events, before any tree exists, and the alias that passes the cap is named:
// line 5's eighth *d (13 nodes before line 2, 1,237 before line 4, 12,351 before its first
// *d, each *d 11,111 more).
TEST(YamlReader, AnAliasBombIsRefusedAtTheFirstAliasPastTheCap) {
  const std::string text = alias_bomb();
  ASSERT_LT(text.size(), 500u);
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  EXPECT_FALSE(load_yaml_document(text, errors).has_value());
  EXPECT_EQ(r.texts(),
            (std::vector<std::string>{
                "f.yaml:5:36: invalid YAML: with its aliases expanded the document passes 100000 "
                "nodes here, far more than any kvsweep input holds: write the values out or use "
                "fewer aliases\n"
                "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                "                                   ^"}));
}

// A bomb whose expansion wraps 64 bits is still refused (the count saturates), as is an alias
// inside the node it names, which yaml-cpp accepts and no walk would end.
TEST(YamlReader, AliasesThatNeverEndOrWrapTheCountAreRefused) {
  {
    std::string text = "a0: &a0 [x, x, x, x]\n";
    for (int level = 1; level < 40; ++level) {
      const std::string name = "a" + std::to_string(level);
      const std::string previous = "*a" + std::to_string(level - 1);
      text += name + ": &" + name + " [" + previous + ", " + previous + ", " + previous + ", " +
              previous + "]\n";
    }
    Read r;
    YamlErrors errors("f.yaml", text, &r.errors);
    EXPECT_FALSE(load_yaml_document(text, errors).has_value());
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("passes 100000 nodes"), std::string::npos);
  }
  {
    const std::string text = "name: x\nloop: &l {again: *l}\n";
    Read r;
    YamlErrors errors("f.yaml", text, &r.errors);
    EXPECT_FALSE(load_yaml_document(text, errors).has_value());
    EXPECT_EQ(r.texts(), (std::vector<std::string>{
                             "f.yaml:2:18: invalid YAML: this alias is inside the node its anchor "
                             "names: that node would hold itself without end\n"
                             "loop: &l {again: *l}\n"
                             "                 ^"}));
  }
}

// Aliases a person writes (one mapping reused) read as before; a key written twice inside the
// aliased mapping is reported once, where it is written, not once per alias.
TEST(YamlReader, AliasesWithinTheCapReadAsWrittenAndDuplicatesAreReportedOnce) {
  const std::string text =
      "base: &b {x: 1, x: 2}\n"
      "one: *b\n"
      "two: *b\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  const auto root = load_yaml_document(text, errors);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ((*root)["two"]["x"].Scalar(), "1");
  EXPECT_EQ(r.texts(), (std::vector<std::string>{
                           "f.yaml:1:17: base.x: key written twice in one mapping (first at line "
                           "1, column 11); only one of them would be used: remove the other\n"
                           "base: &b {x: 1, x: 2}\n"
                           "                ^"}));
}

// An error quotes a short, escaped excerpt of the file: a long value is cut (its size said), a
// terminal escape sequence is shown as text, and a long line is shown around the caret only.
TEST(YamlReader, ErrorsQuoteAShortEscapedExcerptOfTheFile) {
  const std::string text = "count: \"\\e[31m" + std::string(200, 'k') + "\"\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  YamlMapReader reader(*load_yaml_document(text, errors), "", errors);
  int count = 0;
  reader.read_int("count", &count, 1);
  EXPECT_EQ(
      r.texts(),
      (std::vector<std::string>{"f.yaml:1:8: count: expected an integer >= 1, got \"\\x1B[31m" +
                                std::string(40, 'k') + "...\" (205 bytes)\ncount: \"\\e[31m" +
                                std::string(53, 'k') + "...\n       ^"}));
  // Far along a long line, the caret stays under its place.
  const std::string wide = "a: [" + std::string(300, 'x') + ", {b: 1, b: 2}]\n";
  Read w;
  YamlErrors wide_errors("f.yaml", wide, &w.errors);
  ASSERT_TRUE(load_yaml_document(wide, wide_errors).has_value());
  ASSERT_EQ(w.errors.size(), 1u);
  EXPECT_EQ(w.errors[0].text.substr(w.errors[0].text.find('\n') + 1),
            "..." + std::string(51, 'x') + ", {b: 1, b: 2}]\n" + std::string(63, ' ') + "^");
}

TEST(YamlReader, ASecondDocumentIsAnErrorButATrailingSeparatorIsNot) {
  {
    const std::string text = "a: 1\n---\nb: 2\n";
    Read r;
    YamlErrors errors("f.yaml", text, &r.errors);
    const auto root = load_yaml_document(text, errors);
    ASSERT_TRUE(root.has_value());
    EXPECT_EQ((*root)["a"].Scalar(), "1");
    EXPECT_EQ(r.texts(), (std::vector<std::string>{
                             "f.yaml:3:1: a second YAML document (after ---): the file must hold "
                             "one; merge it into the first or remove it\nb: 2\n^"}));
  }
  {
    const std::string text = "---\na: 1\n---\n";
    Read r;
    YamlErrors errors("f.yaml", text, &r.errors);
    ASSERT_TRUE(load_yaml_document(text, errors).has_value());
    EXPECT_TRUE(r.errors.empty()) << r.texts()[0];
  }
}

TEST(YamlReader, SyntaxErrorIsLocatedAndGivesNoDocument) {
  const std::string text = "a: [1, 2\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  EXPECT_FALSE(load_yaml_document(text, errors).has_value());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].text.rfind("f.yaml:", 0), 0u);
  EXPECT_NE(r.errors[0].message.find("invalid YAML: "), std::string::npos);
}

// yaml-cpp alone starts empty documents before a stray top-level ',' forever (the reader hung
// and filled memory); it is a syntax error at the comma, in the first document or a later one.
TEST(YamlReader, AStrayCommaAtTheTopLevelIsALocatedSyntaxError) {
  const std::string because =
      "invalid YAML: a ',' outside [ ] or { }: items are separated by commas only inside a flow "
      "list or mapping";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {",\n", "f.yaml:1:1: " + because + "\n,\n^"},
      {"# a comment\n, x\n", "f.yaml:2:1: " + because + "\n, x\n^"},
      {"a: 1\n---\n  ,\n", "f.yaml:3:3: " + because + "\n  ,\n  ^"},
  };
  for (const auto& [text, expected] : cases) {
    Read r;
    YamlErrors errors("f.yaml", text, &r.errors);
    EXPECT_FALSE(load_yaml_document(text, errors).has_value()) << text;
    EXPECT_EQ(r.texts(), std::vector<std::string>{expected}) << text;
  }
}

// A read never changes the document: asking a mapping for a key it lacks while iterating it
// (as the factors section does for every key, a null key included) used to add that key and
// move the mapping's entries under the iterator; asking a null node made it a mapping.
TEST(YamlReader, ReadsLeaveTheDocumentAsItWas) {
  const std::string text = "a:\n  x: 1\n  : 2\n  y: 3\nb:\n";
  Read r;
  YamlErrors errors("f.yaml", text, &r.errors);
  const auto root = load_yaml_document(text, errors);
  ASSERT_TRUE(root.has_value());
  YamlMapReader a((*root)["a"], "a", errors);
  std::vector<std::string> keys;
  for (auto it = a.node().begin(); it != a.node().end(); ++it) {
    keys.push_back(it->first.IsScalar() ? it->first.Scalar() : "(null)");
    (void)a.get(it->first.IsScalar() ? it->first.Scalar() : "");
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"x", "(null)", "y"}));
  YamlMapReader b((*root)["b"], "b", errors);
  EXPECT_FALSE(b.get("missing").IsDefined());
  b.require("missing");
  EXPECT_TRUE((*root)["b"].IsNull());
  EXPECT_EQ((*root)["a"].size(), 3u);
}

TEST(YamlReader, AnErrorWithoutPositionNamesTheFileOnly) {
  Read r;
  YamlErrors errors("f.yaml", "", &r.errors);
  errors.add(YAML::Mark::null_mark(), "", "cannot read the file");
  EXPECT_EQ(r.texts(), (std::vector<std::string>{"f.yaml: cannot read the file"}));
  EXPECT_EQ(r.errors[0].line, 0);
}

TEST(YamlReader, EmptyTextIsANullDocument) {
  Read r;
  YamlErrors errors("f.yaml", "", &r.errors);
  const auto root = load_yaml_document("", errors);
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->IsNull());
  EXPECT_TRUE(r.errors.empty());
}

}  // namespace
}  // namespace kvsweep
