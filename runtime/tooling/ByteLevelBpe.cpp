//===- ByteLevelBpe.cpp - Byte-level BPE of tokenizer.json ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Follows `tokenizers` (0.2x) step by step, including its quirks: the
// ByteLevel pre-tokenizer's prefix space goes before every segment, and a
// token whose text is not all of GPT-2's alphabet decodes to its own UTF-8.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ByteLevelBpe.h"

#include "dtensor/Tooling/Utf8.h"

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <limits>

namespace dtensor::tooling {

namespace {

using nlohmann::json;

/// GPT-2's pre-tokenizer (ByteLevel with use_regex).
const char *const gpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// Unicode's White_Space characters (Rust's char::is_whitespace, which
/// lstrip and rstrip of added tokens use).
bool isWhiteSpace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// The code point starting at `at` of valid UTF-8 and its length.
uint32_t codePointAt(std::string_view text, size_t at, size_t &length) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  if (lead < 0xE0) {
    length = 2;
    return (lead & 0x1F) << 6 | (byte(at + 1) & 0x3F);
  }
  if (lead < 0xF0) {
    length = 3;
    return (lead & 0x0F) << 12 | (byte(at + 1) & 0x3F) << 6 |
           (byte(at + 2) & 0x3F);
  }
  length = 4;
  return (lead & 0x07) << 18 | (byte(at + 1) & 0x3F) << 12 |
         (byte(at + 2) & 0x3F) << 6 | (byte(at + 3) & 0x3F);
}

/// The code point that ends at `end` (exclusive) and its length.
uint32_t codePointBefore(std::string_view text, size_t end, size_t &length) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80)
    --begin;
  return codePointAt(text, begin, length);
}

/// GPT-2's byte alphabet: the printable bytes ! to ~, ¡ to ¬ and ® to ÿ are
/// their own code points; the other 68 bytes, in order, are U+0100 onwards.
std::array<uint32_t, 256> byteCodePoints() {
  std::array<uint32_t, 256> points{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                     (b >= 0xAE && b <= 0xFF);
    points[b] = printable ? b : next++;
  }
  return points;
}

std::string typeOf(const json &config) {
  auto type = config.find("type");
  return type != config.end() && type->is_string() ? type->get<std::string>()
                                                   : "";
}

bool flag(const json &config, const char *name, bool fallback) {
  auto value = config.find(name);
  return value != config.end() && value->is_boolean() ? value->get<bool>()
                                                      : fallback;
}

bool unsupported(std::string &error, const std::string &message) {
  error = "tokenizer.json: " + message +
          " is not supported (byte-level BPE without a normalizer or with "
          "NFC, as GPT-2, Llama 3 and Qwen2 use it, is)";
  return false;
}

/// `text` (valid UTF-8) in Unicode Normalization Form C, as `tokenizers`'
/// NFC normalizer gives it.
std::string toNfc(std::string_view text) {
  utf8proc_uint8_t *mapped = nullptr;
  utf8proc_ssize_t length = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
      static_cast<utf8proc_ssize_t>(text.size()), &mapped,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (length < 0)
    return std::string(text); // not UTF-8: encode() repaired it before
  std::string result(reinterpret_cast<const char *>(mapped),
                     static_cast<size_t>(length));
  std::free(mapped);
  return result;
}

/// A segment of the text: plain text, or an added token's id.
struct Segment {
  std::string_view text;
  int64_t addedId = -1;
};

} // namespace

std::unique_ptr<ByteLevelBpe> ByteLevelBpe::fromJson(const json &document,
                                                     std::string &error) {
  std::unique_ptr<ByteLevelBpe> bpe(new ByteLevelBpe());
  try {
    std::array<uint32_t, 256> points = byteCodePoints();
    std::unordered_map<uint32_t, unsigned char> pointBytes;
    for (int b = 0; b < 256; ++b) {
      appendUtf8(points[b], bpe->byteChars_[b]);
      pointBytes[points[b]] = static_cast<unsigned char>(b);
    }

    // None, or NFC (alone or as the one step of a Sequence).
    const json &normalizer = document.value("normalizer", json());
    if (!normalizer.is_null()) {
      const json *step = &normalizer;
      if (typeOf(normalizer) == "Sequence") {
        const json &steps = normalizer.value("normalizers", json::array());
        if (steps.size() == 1)
          step = &steps[0];
      }
      if (typeOf(*step) != "NFC") {
        unsupported(error, "the normalizer '" + typeOf(normalizer) + "'");
        return nullptr;
      }
      bpe->nfc_ = true;
    }
    const json &model = document.at("model");
    if (typeOf(model) != "BPE") {
      unsupported(error, "the model '" + typeOf(model) + "'");
      return nullptr;
    }
    for (const char *field :
         {"dropout", "continuing_subword_prefix", "end_of_word_suffix"})
      if (model.contains(field) && !model[field].is_null() &&
          !(model[field].is_string() &&
            model[field].get<std::string>().empty())) {
        unsupported(error, std::string("the BPE model's '") + field + "'");
        return nullptr;
      }
    bpe->ignoreMerges_ = flag(model, "ignore_merges", false);
    int64_t maxId = -1;
    for (const auto &item : model.at("vocab").items()) {
      int64_t id = item.value().get<int64_t>();
      bpe->vocab_[item.key()] = id;
      maxId = std::max(maxId, id);
    }
    int64_t rank = 0;
    for (const json &merge : model.at("merges")) {
      std::string left, right;
      if (merge.is_string()) {
        // "left right": byte-level tokens hold no space (it is Ġ).
        std::string text = merge.get<std::string>();
        size_t space = text.find(' ');
        if (space == std::string::npos) {
          error = "tokenizer.json: the merge '" + text + "' has no space";
          return nullptr;
        }
        left = text.substr(0, space);
        right = text.substr(space + 1);
      } else {
        left = merge.at(0).get<std::string>();
        right = merge.at(1).get<std::string>();
      }
      auto leftId = bpe->vocab_.find(left), rightId = bpe->vocab_.find(right),
           merged = bpe->vocab_.find(left + right);
      if (leftId == bpe->vocab_.end() || rightId == bpe->vocab_.end() ||
          merged == bpe->vocab_.end()) {
        error = "tokenizer.json: the merge '" + left + " " + right +
                "' names a token that is not in the vocabulary";
        return nullptr;
      }
      uint64_t key = static_cast<uint64_t>(leftId->second) << 32 |
                     static_cast<uint64_t>(rightId->second);
      // The first merge of a pair counts, as in `tokenizers`.
      bpe->merges_.emplace(key, std::make_pair(rank++, merged->second));
    }

    for (const json &token : document.value("added_tokens", json::array())) {
      AddedToken added;
      added.id = token.at("id").get<int64_t>();
      added.content = token.at("content").get<std::string>();
      added.leftStrip = flag(token, "lstrip", false);
      added.rightStrip = flag(token, "rstrip", false);
      added.normalized = flag(token, "normalized", false);
      if (flag(token, "single_word", false)) {
        unsupported(error,
                    "the added token '" + added.content + "' with single_word");
        return nullptr;
      }
      if (added.content.empty())
        continue;
      if (flag(token, "special", false))
        bpe->special_.insert(added.id);
      maxId = std::max(maxId, added.id);
      bpe->addedFirstBytes_[static_cast<unsigned char>(added.content[0])] =
          true;
      bpe->added_.push_back(std::move(added));
    }
    // Longest first: the leftmost match is the longest one there.
    std::stable_sort(bpe->added_.begin(), bpe->added_.end(),
                     [](const AddedToken &a, const AddedToken &b) {
                       return a.content.size() > b.content.size();
                     });

    if (!bpe->readPreTokenizer(document.value("pre_tokenizer", json()),
                               error) ||
        !bpe->readPostProcessor(document.value("post_processor", json()),
                                error))
      return nullptr;
    const json &decoder = document.value("decoder", json());
    if (typeOf(decoder) != "ByteLevel") {
      unsupported(error, "the decoder '" +
                             (decoder.is_null() ? "null" : typeOf(decoder)) +
                             "' (a Llama 2 or Mistral model has "
                             "tokenizer.model: use that)");
      return nullptr;
    }

    // What each id decodes to: its characters mapped back to bytes, or its
    // own UTF-8 when one of them is not in the byte alphabet.
    bpe->tokenBytes_.assign(static_cast<size_t>(maxId + 1), std::string());
    auto setBytes = [&](int64_t id, const std::string &token) {
      std::string bytes;
      for (size_t at = 0, length = 0; at < token.size(); at += length) {
        uint32_t point = codePointAt(token, at, length);
        auto byte = pointBytes.find(point);
        if (byte == pointBytes.end()) {
          bytes = token;
          break;
        }
        bytes += static_cast<char>(byte->second);
      }
      bpe->tokenBytes_[id] = bytes;
    };
    for (const auto &[token, id] : bpe->vocab_)
      setBytes(id, token);
    for (const AddedToken &added : bpe->added_)
      setBytes(added.id, added.content);
  } catch (const json::exception &failure) {
    error = std::string("tokenizer.json: ") + failure.what();
    return nullptr;
  }
  return bpe;
}

bool ByteLevelBpe::readPreTokenizer(const json &config, std::string &error) {
  std::vector<const json *> steps;
  if (typeOf(config) == "Sequence")
    for (const json &step : config.at("pretokenizers"))
      steps.push_back(&step);
  else
    steps.push_back(&config);
  bool byteLevel = false;
  for (const json *step : steps) {
    std::string type = typeOf(*step);
    PreTokenizerStep parsed;
    std::string pattern;
    if (type == "Split") {
      const json &spec = step->at("pattern");
      if (!spec.contains("Regex"))
        return unsupported(error, "a Split pre-tokenizer on a plain string");
      if (step->value("behavior", std::string()) != "Isolated" ||
          flag(*step, "invert", false))
        return unsupported(error, "a Split pre-tokenizer whose behavior is "
                                  "not Isolated");
      pattern = spec.at("Regex").get<std::string>();
    } else if (type == "ByteLevel") {
      byteLevel = true;
      parsed.addPrefixSpace = flag(*step, "add_prefix_space", false);
      if (flag(*step, "use_regex", true))
        pattern = gpt2Pattern;
    } else {
      return unsupported(error, "the pre-tokenizer '" + type + "'");
    }
    if (!pattern.empty()) {
      std::unique_ptr<UnicodeRegex> regex =
          UnicodeRegex::compile(pattern, error);
      if (!regex) {
        error = "tokenizer.json: " + error;
        return false;
      }
      parsed.regex = std::move(regex);
    }
    preTokenizer_.push_back(std::move(parsed));
  }
  if (!byteLevel)
    return unsupported(error, "a pre-tokenizer without ByteLevel");
  return true;
}

bool ByteLevelBpe::readPostProcessor(const json &config, std::string &error) {
  std::vector<const json *> steps;
  if (typeOf(config) == "Sequence")
    for (const json &step : config.at("processors"))
      steps.push_back(&step);
  else if (!config.is_null())
    steps.push_back(&config);
  for (const json *step : steps) {
    std::string type = typeOf(*step);
    if (type == "ByteLevel")
      continue; // offsets only
    if (type != "TemplateProcessing")
      return unsupported(error, "the post-processor '" + type + "'");
    bool afterSequence = false;
    for (const json &item : step->at("single")) {
      if (item.contains("Sequence")) {
        afterSequence = true;
        continue;
      }
      std::string name = item.at("SpecialToken").at("id").get<std::string>();
      for (const json &id : step->at("special_tokens").at(name).at("ids"))
        (afterSequence ? suffixIds_ : prefixIds_).push_back(id.get<int64_t>());
    }
  }
  return true;
}

std::optional<int64_t> ByteLevelBpe::tokenId(const std::string &token) const {
  for (const AddedToken &added : added_)
    if (added.content == token)
      return added.id;
  auto found = vocab_.find(token);
  if (found != vocab_.end())
    return found->second;
  return std::nullopt;
}

std::vector<int64_t> ByteLevelBpe::encode(const std::string &input,
                                          bool addSpecialTokens) const {
  // PCRE2 matches valid UTF-8 only; JSON requests are valid already.
  std::string repaired;
  std::string_view text = input;
  if (!isValidUtf8(text)) {
    repaired = utf8Lossy(text);
    text = repaired;
  }

  // Added tokens: those matched on the raw text first, then those matched
  // on the normalized text, each pass leftmost then longest, on the
  // segments that are still text. The normalized texts live in `store`.
  std::vector<Segment> segments = {{text, -1}};
  std::deque<std::string> store;
  for (bool normalizedPass : {false, true}) {
    if (normalizedPass && nfc_)
      for (Segment &segment : segments)
        if (segment.addedId < 0)
          segment.text = store.emplace_back(toNfc(segment.text));
    std::vector<Segment> next;
    for (const Segment &segment : segments) {
      if (segment.addedId >= 0) {
        next.push_back(segment);
        continue;
      }
      std::string_view rest = segment.text;
      size_t at = 0, textStart = 0;
      while (at < rest.size()) {
        const AddedToken *match = nullptr;
        if (!addedFirstBytes_[static_cast<unsigned char>(rest[at])]) {
          ++at;
          continue;
        }
        for (const AddedToken &added : added_)
          if (added.normalized == normalizedPass &&
              rest.compare(at, added.content.size(), added.content) == 0) {
            match = &added;
            break;
          }
        if (!match) {
          ++at;
          continue;
        }
        size_t begin = at, end = at + match->content.size();
        if (match->leftStrip)
          for (size_t length = 0; begin > textStart; begin -= length)
            if (!isWhiteSpace(codePointBefore(rest, begin, length)))
              break;
        if (match->rightStrip)
          for (size_t length = 0; end < rest.size(); end += length)
            if (!isWhiteSpace(codePointAt(rest, end, length)))
              break;
        if (begin > textStart)
          next.push_back({rest.substr(textStart, begin - textStart), -1});
        next.push_back({rest.substr(begin, end - begin), match->id});
        at = textStart = end;
      }
      if (textStart < rest.size())
        next.push_back({rest.substr(textStart), -1});
    }
    segments = std::move(next);
  }

  std::vector<int64_t> ids;
  if (addSpecialTokens)
    ids = prefixIds_;
  for (const Segment &segment : segments) {
    if (segment.addedId >= 0)
      ids.push_back(segment.addedId);
    else
      encodeSegment(segment.text, ids);
  }
  if (addSpecialTokens)
    ids.insert(ids.end(), suffixIds_.begin(), suffixIds_.end());
  return ids;
}

void ByteLevelBpe::encodeSegment(std::string_view text,
                                 std::vector<int64_t> &ids) const {
  // Pieces own their text: a prefix space makes new strings.
  std::vector<std::string> pieces = {std::string(text)};
  for (const PreTokenizerStep &step : preTokenizer_) {
    std::vector<std::string> next;
    for (std::string &piece : pieces) {
      if (step.addPrefixSpace && (piece.empty() || piece[0] != ' '))
        piece.insert(piece.begin(), ' ');
      if (!step.regex) {
        next.push_back(std::move(piece));
        continue;
      }
      for (std::string_view part : splitIsolated(*step.regex, piece))
        next.emplace_back(part);
    }
    pieces = std::move(next);
  }
  for (const std::string &piece : pieces)
    encodeWord(piece, ids);
}

void ByteLevelBpe::encodeWord(std::string_view piece,
                              std::vector<int64_t> &ids) const {
  if (piece.empty())
    return;
  std::string word;
  for (char byte : piece)
    word += byteChars_[static_cast<unsigned char>(byte)];
  {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    auto cached = cache_.find(word);
    if (cached != cache_.end()) {
      ids.insert(ids.end(), cached->second.begin(), cached->second.end());
      return;
    }
  }
  std::vector<int64_t> symbols;
  auto whole = ignoreMerges_ ? vocab_.find(word) : vocab_.end();
  if (whole != vocab_.end()) {
    symbols.push_back(whole->second);
  } else {
    // One symbol per byte (a byte missing from the vocabulary is dropped,
    // as `tokenizers` does without an unknown token).
    for (char byte : piece) {
      auto id = vocab_.find(byteChars_[static_cast<unsigned char>(byte)]);
      if (id != vocab_.end())
        symbols.push_back(id->second);
    }
    // Merge the pair of lowest rank, leftmost first, until none applies.
    while (symbols.size() > 1) {
      int64_t bestRank = std::numeric_limits<int64_t>::max(), merged = -1;
      size_t best = 0;
      for (size_t i = 0; i + 1 < symbols.size(); ++i) {
        auto found = merges_.find(static_cast<uint64_t>(symbols[i]) << 32 |
                                  static_cast<uint64_t>(symbols[i + 1]));
        if (found != merges_.end() && found->second.first < bestRank) {
          bestRank = found->second.first;
          merged = found->second.second;
          best = i;
        }
      }
      if (merged < 0)
        break;
      symbols[best] = merged;
      symbols.erase(symbols.begin() + best + 1);
    }
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  std::lock_guard<std::mutex> lock(cacheMutex_);
  // Bounded: a long-running server sees unbounded distinct words.
  if (cache_.size() >= 200000)
    cache_.clear();
  cache_.emplace(std::move(word), std::move(symbols));
}

std::string ByteLevelBpe::decode(const std::vector<int64_t> &ids,
                                 bool skipSpecialTokens) const {
  std::string bytes;
  for (int64_t id : ids) {
    if (id < 0 || id >= size() || (skipSpecialTokens && special_.count(id)))
      continue;
    bytes += tokenBytes_[id];
  }
  return utf8Lossy(bytes);
}

} // namespace dtensor::tooling
