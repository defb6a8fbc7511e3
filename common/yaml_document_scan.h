// The pass over a YAML text's parser events that load_yaml_document (common/yaml_reader.h)
// makes before any tree is built: node counts with aliases expanded (kMaxYamlNodes), aliases
// inside the node they name, keys written twice, and yaml-cpp's stuck empty documents.
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/yaml_limits.h"

namespace kvsweep {

// One pass over a text's parser events, before any tree is built or walked. Events never
// expand an alias (an alias is one event), so this pass costs what the text's length does,
// whatever its aliases would grow to. Per document it
//   - counts the nodes a walk of the document would visit, each alias counted as the size of
//     the node its anchor names, and keeps where that count first passes kMaxYamlNodes (or
//     where an alias sits inside the node it names, which no walk ends);
//   - finds, in the first document, every key written twice in one mapping (yaml-cpp keeps
//     both entries and a lookup finds the first, so the second would be silently ignored);
//   - notes a document that starts where the previous one did (see scan_documents).
class DocumentScan : public YAML::EventHandler {
 public:
  struct Duplicate {
    YAML::Mark mark;
    std::string field;
    YAML::Mark first;
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    start_ = mark;
    stack_.clear();
    anchors_.clear();
    open_anchors_.clear();
    anchor_text_.clear();
    visited_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    leaf(mark, anchor, 1, nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    leaf(mark, anchor, 1, &value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (open_anchors_.count(anchor) != 0) {
      refuse(mark,
             "invalid YAML: this alias is inside the node its anchor names: that node would "
             "hold itself without end");
      leaf(mark, YAML::NullAnchor, 1, nullptr);
      return;
    }
    const auto size = anchors_.find(anchor);
    const auto text = anchor_text_.find(anchor);
    leaf(mark, YAML::NullAnchor, size == anchors_.end() ? 1 : size->second,
         text == anchor_text_.end() ? nullptr : &text->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

  const YAML::Mark& document_start() const { return start_; }
  // Where the first document too large once expanded (or holding itself) is, and why.
  const std::optional<std::pair<YAML::Mark, std::string>>& refused() const { return refused_; }
  const std::vector<Duplicate>& duplicates() const { return duplicates_; }

 private:
  struct Frame {
    bool is_map = false;
    bool at_key = true;  // a mapping's next node is a key
    std::uint64_t size = 1;
    YAML::anchor_t anchor = YAML::NullAnchor;
    std::string key;        // the key whose value is being read, in a mapping
    std::size_t index = 0;  // the item being read, in a sequence
    std::map<std::string, YAML::Mark> keys;
  };

  static std::uint64_t add(std::uint64_t a, std::uint64_t b) {
    return std::min<std::uint64_t>(a + b, kMaxYamlNodes + 1);  // both are <= kMaxYamlNodes + 1
  }

  void refuse(const YAML::Mark& mark, std::string why) {
    if (!refused_) refused_.emplace(mark, std::move(why));
  }

  // The dotted path of the node being read: "load.max_tokens", "b[0].x".
  std::string path() const {
    std::string out;
    for (const Frame& frame : stack_) {
      if (frame.is_map) {
        out += (out.empty() ? "" : ".") + frame.key;
      } else {
        out += "[" + std::to_string(frame.index) + "]";
      }
    }
    return out;
  }

  // Before any node: a key of a mapping in the first document, when it is a scalar
  // (`key_text`), is checked against the keys written before it there.
  void arrive(const YAML::Mark& mark, const std::string* key_text) {
    if (stack_.empty() || !stack_.back().is_map || !stack_.back().at_key) return;
    Frame& map = stack_.back();
    map.key = key_text != nullptr ? *key_text : "";
    if (key_text == nullptr || documents_ != 1) return;
    const auto [first, inserted] = map.keys.emplace(*key_text, mark);
    if (!inserted) {
      // path() now ends in this key: the mapping's path plus the key.
      duplicates_.push_back({mark, path(), first->second});
    }
  }

  // After a node of `size` nodes: its parent counts it and moves to its next child.
  void done(std::uint64_t size) {
    if (stack_.empty()) return;
    Frame& parent = stack_.back();
    parent.size = add(parent.size, size);
    if (parent.is_map) {
      parent.at_key = !parent.at_key;
    } else {
      ++parent.index;
    }
  }

  void count(const YAML::Mark& mark, std::uint64_t size) {
    visited_ = add(visited_, size);
    if (visited_ > kMaxYamlNodes) {
      refuse(mark, "invalid YAML: with its aliases expanded the document passes " +
                       std::to_string(kMaxYamlNodes) +
                       " nodes here, far more than any kvsweep input holds: write the values out "
                       "or use fewer aliases");
    }
  }

  // A scalar (`text`), null or alias (`text` when it names a scalar) of `size` nodes.
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, std::uint64_t size,
            const std::string* text) {
    arrive(mark, text);
    count(mark, size);
    if (anchor != YAML::NullAnchor) {
      anchors_[anchor] = size;
      if (text != nullptr) anchor_text_[anchor] = *text;
    }
    done(size);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    arrive(mark, nullptr);
    count(mark, 1);
    if (anchor != YAML::NullAnchor) open_anchors_.insert(anchor);
    Frame frame;
    frame.is_map = is_map;
    frame.anchor = anchor;
    stack_.push_back(std::move(frame));
  }

  void close() {
    if (stack_.empty()) return;
    const std::uint64_t size = stack_.back().size;
    const YAML::anchor_t anchor = stack_.back().anchor;
    stack_.pop_back();
    if (anchor != YAML::NullAnchor) {
      open_anchors_.erase(anchor);
      anchors_[anchor] = size;
    }
    done(size);
  }

  int documents_ = 0;
  YAML::Mark start_ = YAML::Mark::null_mark();
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::uint64_t> anchors_;  // each closed anchor's expanded size
  std::set<YAML::anchor_t> open_anchors_;
  std::map<YAML::anchor_t, std::string> anchor_text_;  // an anchored scalar, for alias keys
  std::uint64_t visited_ = 0;
  std::optional<std::pair<YAML::Mark, std::string>> refused_;
  std::vector<Duplicate> duplicates_;
};

// Scans every document of `text` (a syntax error is thrown as usual). yaml-cpp 0.7 leaves a
// ',' that opens a document (a stray ',' at the top level) unread and starts an empty document
// before it again and again: YAML::LoadAll never returns and fills memory. A document that
// starts where the previous one did (nothing read in between) ends the scan; its position is
// `stuck`.
struct Scanned {
  DocumentScan scan;
  std::optional<YAML::Mark> stuck;
};

void scan_documents(const std::string& text, Scanned& out);

}  // namespace kvsweep
