// The fields of one streamed chunk that the decoder needs, read without building a document.
#include "driver/chunk_fields.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace kvsweep::driver {
namespace {

using Json = nlohmann::json;

// Where a container sits, as far as the fields we read are concerned.
enum class Place { kOther, kRoot, kUsage, kDetails, kChoices, kChoice, kDelta };

enum class Key {
  kOther,
  kError,
  kUsage,
  kChoices,
  kText,
  kDelta,
  kContent,
  kReasoningContent,
  kReasoning,
  kPromptTokens,
  kCompletionTokens,
  kDetails,
  kCachedTokens
};

Key key_of(std::string_view key) {
  if (key == "choices") return Key::kChoices;
  if (key == "delta") return Key::kDelta;
  if (key == "content") return Key::kContent;
  if (key == "text") return Key::kText;
  if (key == "usage") return Key::kUsage;
  if (key == "prompt_tokens") return Key::kPromptTokens;
  if (key == "completion_tokens") return Key::kCompletionTokens;
  if (key == "prompt_tokens_details") return Key::kDetails;
  if (key == "cached_tokens") return Key::kCachedTokens;
  if (key == "reasoning_content") return Key::kReasoningContent;
  if (key == "reasoning") return Key::kReasoning;
  if (key == "error") return Key::kError;
  return Key::kOther;
}

struct Frame {
  Place place = Place::kOther;
  Key key = Key::kOther;  // objects: the key of the value being read
  int element = 0;        // arrays: the index of the value being read
};

// nlohmann's SAX handler: every method returns true to go on.
class ChunkSax {
 public:
  explicit ChunkSax(ChunkFields& fields) : fields_(fields) {}

  bool null() { return scalar(Scalar::kNull, nullptr, 0); }
  bool boolean(bool) { return scalar(Scalar::kOther, nullptr, 0); }
  bool number_integer(Json::number_integer_t value) {
    return scalar(Scalar::kInteger, nullptr, value);
  }
  bool number_unsigned(Json::number_unsigned_t value) {
    return scalar(Scalar::kInteger, nullptr, static_cast<Json::number_integer_t>(value));
  }
  bool number_float(Json::number_float_t, const Json::string_t&) {
    return scalar(Scalar::kOther, nullptr, 0);
  }
  bool string(Json::string_t& value) { return scalar(Scalar::kString, &value, 0); }
  bool binary(Json::binary_t&) { return scalar(Scalar::kOther, nullptr, 0); }

  bool start_object(std::size_t) {
    Place place = Place::kOther;
    if (stack_.empty()) {
      place = Place::kRoot;
      fields_.object = true;
    } else {
      const Frame& parent = stack_.back();
      if (parent.place == Place::kRoot && parent.key == Key::kUsage) place = Place::kUsage;
      if (parent.place == Place::kUsage && parent.key == Key::kDetails) place = Place::kDetails;
      if (parent.place == Place::kChoices && parent.element == 0) place = Place::kChoice;
      if (parent.place == Place::kChoice && parent.key == Key::kDelta) place = Place::kDelta;
      value_in_parent(Scalar::kOther, nullptr);
    }
    stack_.push_back({place, Key::kOther, 0});
    return true;
  }
  bool key(Json::string_t& key) {
    stack_.back().key = key_of(key);
    return true;
  }
  bool end_object() { return end_container(); }
  bool start_array(std::size_t) {
    Place place = Place::kOther;
    if (!stack_.empty()) {
      const Frame& parent = stack_.back();
      if (parent.place == Place::kRoot && parent.key == Key::kChoices) place = Place::kChoices;
      value_in_parent(Scalar::kOther, nullptr);
    }
    stack_.push_back({place, Key::kOther, 0});
    return true;
  }
  bool end_array() { return end_container(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

  // The chunk's content by the documented priority, once the whole event is read.
  void settle() {
    for (std::optional<std::string>* candidate :
         {&text_, &content_, &reasoning_content_, &reasoning_}) {
      if (*candidate && !(*candidate)->empty()) {
        fields_.content = std::move(**candidate);
        return;
      }
    }
  }

 private:
  enum class Scalar { kNull, kString, kInteger, kOther };

  bool end_container() {
    stack_.pop_back();
    return true;
  }

  bool scalar(Scalar kind, Json::string_t* text, Json::number_integer_t number) {
    if (stack_.empty()) return true;  // a top-level scalar: not an object
    const Frame& frame = stack_.back();
    if (kind == Scalar::kInteger) {
      const int value = static_cast<int>(number);
      if (frame.place == Place::kUsage && frame.key == Key::kPromptTokens) {
        fields_.prompt_tokens = value;
      } else if (frame.place == Place::kUsage && frame.key == Key::kCompletionTokens) {
        fields_.completion_tokens = value;
      } else if (frame.place == Place::kDetails && frame.key == Key::kCachedTokens) {
        fields_.cached_tokens = value;
      }
    }
    value_in_parent(kind, text);
    return true;
  }

  // A value (scalar, or a container starting) just came in the top frame.
  void value_in_parent(Scalar kind, Json::string_t* text) {
    Frame& frame = stack_.back();
    if (frame.place == Place::kRoot && frame.key == Key::kError) {
      fields_.error = kind != Scalar::kNull;  // the last "error" counts, as in a document
    }
    std::optional<std::string>* candidate = nullptr;
    if (frame.place == Place::kChoice && frame.key == Key::kText) candidate = &text_;
    if (frame.place == Place::kDelta) {
      if (frame.key == Key::kContent) candidate = &content_;
      if (frame.key == Key::kReasoningContent) candidate = &reasoning_content_;
      if (frame.key == Key::kReasoning) candidate = &reasoning_;
    }
    if (candidate != nullptr) {
      if (kind == Scalar::kString) {
        *candidate = std::move(*text);
      } else {
        candidate->reset();
      }
    }
    ++frame.element;  // arrays count their elements; objects never read it
  }

  ChunkFields& fields_;
  std::vector<Frame> stack_;
  std::optional<std::string> text_;
  std::optional<std::string> content_;
  std::optional<std::string> reasoning_content_;
  std::optional<std::string> reasoning_;
};

}  // namespace

bool read_chunk(std::string_view data, ChunkFields& fields) {
  fields = ChunkFields{};
  ChunkSax sax(fields);
  if (!Json::sax_parse(data, &sax)) {
    fields = ChunkFields{};
    return false;
  }
  sax.settle();
  return true;
}

}  // namespace kvsweep::driver
