#include "slurm/record_batches.h"

#include <cstring>
#include <string>

#include "slurm/answer_decoder.h"
#include "slurm/json_fields.h"
#include "slurm/json_spans.h"
#include "slurm/record_decoders.h"

namespace tuneplane::slurm {
namespace {

namespace ondemand = simdjson::ondemand;
using json_fields::indexed;
using records::malformed;
using simdjson::error_code;
using simdjson::SUCCESS;
using Type = ondemand::json_type;

constexpr size_t kNoPosition = std::string_view::npos;

// The last quote in text[begin, end) that no backslash escapes, or kNoPosition.
size_t lastUnescapedQuote(std::string_view text, size_t begin, size_t end) {
  while (end > begin) {
    const size_t quote = text.rfind('"', end - 1);
    if (quote == kNoPosition || quote < begin) return kNoPosition;
    size_t backslashes = 0;
    while (quote - backslashes > begin && text[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote;
    end = quote;
  }
  return kNoPosition;
}

// Indexes text[begin, end) behind a '[' in `batch`. The padding is zeros: simdjson reads its
// end-of-input sentinel from there, and a zero is no bracket, so no read goes past the cut.
error_code indexBatch(std::string_view text, size_t begin, size_t end, std::string& batch,
                      ondemand::parser& parser, ondemand::document& doc) {
  batch.assign(1, '[');
  batch.append(text.substr(begin, end - begin));
  const size_t size = batch.size();
  batch.append(kJsonPadding, '\0');
  return parser.iterate(batch.data(), size, batch.size()).get(doc);
}

std::string_view trimmed(std::string_view raw) {
  while (!raw.empty() && std::strchr(" \t\r\n", raw.back()) != nullptr) raw.remove_suffix(1);
  return raw;
}

// Checks that a non-object `element` lies whole inside the batch (`batch`, without padding),
// and validates it. simdjson bounds its skip by the batch's end, but may take the
// end-of-input sentinel for a value (`[[` "skips" as `[`), so an array is whole only if its
// span is valid JSON on its own, and a scalar only if something follows it inside the batch.
// `end` is where it ends, as an offset into the batch.
error_code checkWhole(ondemand::value& element, Type type, std::string_view batch, size_t& end) {
  std::string_view raw;
  if (type == Type::array) {
    if (auto e = json_fields::checkSkippedArray(element, raw)) return e;
    raw = trimmed(raw);
  } else {
    raw = element.raw_json_token();
    const size_t token_end = static_cast<size_t>(raw.data() - batch.data()) + raw.size();
    if (token_end >= batch.size()) return simdjson::INCOMPLETE_ARRAY_OR_OBJECT;
    if (auto e = json_fields::checkScalar(element, type)) return e;
    raw = trimmed(raw);
  }
  end = static_cast<size_t>(raw.data() - batch.data()) + raw.size();
  return SUCCESS;
}

// Where the batch for text[pos, limit) ends: after its last '}' (in slurmrestd's answers
// almost never inside a string), or kNoPosition when there is none.
size_t cutAfterBrace(std::string_view text, size_t pos, size_t limit) {
  if (limit >= text.size()) return text.size();  // the rest of the answer: no cut
  const size_t brace = text.rfind('}', limit - 1);
  return brace != kNoPosition && brace >= pos ? brace + 1 : kNoPosition;
}

// Whether the batch document stopped at the cut: at or after the batch's last token (a '}',
// or what comes before a string's opening quote: '[', '{', ',' or ':'; one byte each).
// simdjson reports a dead iterator at the token before the one that failed, so a record the
// cut broke fails there; a malformed one fails earlier. A failure at the last token of a
// malformed record is taken for a cut too: the next batch, larger, tells them apart.
bool stoppedAtCut(ondemand::document& doc, std::string_view batch) {
  size_t last = batch.size();
  while (last > 0 && std::strchr(" \t\r\n", batch[last - 1]) != nullptr) --last;
  const char* at = nullptr;
  auto e = doc.current_location().get(at);
  return e == simdjson::OUT_OF_BOUNDS ||
         (e == SUCCESS && last > 0 && at >= batch.data() + last - 1);
}

}  // namespace

Result<size_t> forEachRecordInBatches(std::string_view text, size_t begin, std::string_view key,
                                      size_t batch_bytes, ondemand::parser& batch_parser,
                                      const RecordSink& sink) {
  size_t pos = skipSpace(text, begin + 1);
  if (pos < text.size() && text[pos] == ']') return pos + 1;
  std::string batch;
  size_t window = std::max<size_t>(batch_bytes, 1);
  size_t index = 0;
  for (;;) {
    if (pos >= text.size())
      return records::badResponse(indexed(key, index), "malformed JSON: the array never ends");
    // A record too big for the batch: a larger one. Only a malformed record grows it to the
    // rest of the answer.
    auto grow = [&]() -> Status {
      if (pos + window >= text.size()) {
        return records::badResponse(
            indexed(key, index),
            "malformed JSON: the record is cut short or its brackets do not balance");
      }
      window *= 2;
      return {};
    };
    size_t end = cutAfterBrace(text, pos, std::min(text.size(), pos + window));
    if (end == kNoPosition) {
      if (auto grown = grow(); !grown) return tl::unexpected(grown.error());
      continue;
    }
    bool cut = end < text.size();
    ondemand::document doc;
    error_code e = indexBatch(text, pos, end, batch, batch_parser, doc);
    if (e && !cut) {
      // The rest of the answer, refused by simdjson's first stage (a truncated answer ends
      // inside a string): the records before its last '}' go first, so that the error names
      // the record that is broken, not the first of the batch.
      const size_t brace = text.rfind('}', end - 1);
      if (brace != kNoPosition && brace >= pos && brace + 1 < end) {
        end = brace + 1;
        cut = true;
        e = indexBatch(text, pos, end, batch, batch_parser, doc);
      }
    }
    if (e == simdjson::UNCLOSED_STRING && cut) {
      // That '}' was inside a string: end the batch before the string's opening quote.
      const size_t quote = lastUnescapedQuote(text, pos, end);
      e = simdjson::UNCLOSED_STRING;
      if (quote != kNoPosition && quote > pos) {
        end = quote;
        e = indexBatch(text, pos, end, batch, batch_parser, doc);
      }
      if (e == simdjson::UNCLOSED_STRING) {
        if (auto grown = grow(); !grown) return tl::unexpected(grown.error());
        continue;
      }
    }
    if (e) return tl::unexpected(malformed(indexed(key, index), e));
    // get_value().get_array(), not get_array(): the root-array check wants the batch to end
    // with ']', and a batch ends inside a record.
    ondemand::value root;
    ondemand::array elements;
    if ((e = doc.get_value().get(root)) || (e = root.get_array().get(elements))) {
      return tl::unexpected(malformed(indexed(key, index), e));
    }
    const std::string_view batch_text(batch.data(), batch.size() - kJsonPadding);
    size_t whole = 0;    // records of this batch handed over
    size_t next = pos;   // where the text goes on after the last of them
    bool closed = true;  // the array's own ']' came inside the batch
    for (auto item : elements) {
      ondemand::value element;
      Type type;
      if (std::move(item).get(element) || element.type().get(type)) {
        closed = false;
        break;
      }
      std::optional<Error> failure;
      size_t end_in_batch = 0;  // where the record ends, as an offset into the batch
      if (type == Type::object) {
        // Decoded straight away: a record the batch cuts short fails at the cut (the zero
        // padding stops every read there) and is decoded again, whole, in the next batch.
        ondemand::object object;
        if (element.get_object().get(object)) {
          closed = false;
          break;
        }
        failure = sink(&object, index);
        if (failure && cut && stoppedAtCut(doc, batch_text)) {
          closed = false;
          break;
        }
        // Decoded to its '}': simdjson stands at the token after it.
        const char* after = nullptr;
        end_in_batch = doc.current_location().get(after) == SUCCESS
                           ? static_cast<size_t>(after - batch_text.data())
                           : batch_text.size();
      } else {
        if (checkWhole(element, type, batch_text, end_in_batch)) {
          closed = false;
          break;
        }
        failure = sink(nullptr, index);
      }
      if (failure) return tl::unexpected(std::move(*failure));
      ++index;
      ++whole;
      next = pos + end_in_batch - 1;  // the batch starts with a '[' the text does not have
    }
    if (closed) {
      const size_t close = skipSpace(text, next);
      if (whole == 0 || close >= text.size() || text[close] != ']') {
        return records::badResponse(indexed(key, index), "malformed JSON: expected ',' or ']'");
      }
      return close + 1;
    }
    if (whole == 0) {
      if (!cut) {
        return records::badResponse(
            indexed(key, index),
            "malformed JSON: the record is cut short or its brackets do not balance");
      }
      if (auto grown = grow(); !grown) return tl::unexpected(grown.error());
      continue;
    }
    // The batch was cut after `whole` records: go on after the comma that follows the last.
    const size_t separator = skipSpace(text, next);
    if (separator < text.size() && text[separator] == ']') return separator + 1;
    if (separator >= text.size() || text[separator] != ',') {
      return records::badResponse(indexed(key, index), "malformed JSON: expected ',' or ']'");
    }
    pos = skipSpace(text, separator + 1);
  }
}

}  // namespace tuneplane::slurm
