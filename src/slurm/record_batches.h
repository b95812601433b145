// The records array of a large answer, parsed by simdjson a batch at a time. About 256 KiB of
// the answer (DecodeOptions::batch_bytes) is copied behind a '[' into a zero-padded buffer;
// simdjson's first stage indexes it, which finds the records' boundaries (strings and escapes
// included) at SIMD speed; each record that lies whole inside the batch is handed over; the next
// batch starts at the first record that did not fit. The parser's index covers one batch, never the
// answer, so memory stays near the answer's size, and it stays in the cache while the records are
// decoded.
//
// Why the copy behind '[': simdjson's On-Demand parser reads one JSON value per document, and
// the records between two cuts are a list, not a value. A cut never falls inside a string
// (the first stage says when it would, and the batch then ends before that string's opening
// quote). Each record is first skipped (a bounded skip, which finds its extent) and only
// decoded once whole: the record a batch cuts short is never decoded, and the zero padding
// stops every read at the cut (simdjson stops at its end-of-input sentinel).
// Internal to the slurm module (it exposes simdjson). Thread-safety: stateless.
#pragma once

#include <simdjson.h>

#include <functional>
#include <optional>
#include <string_view>

#include "common/result.h"

namespace tuneplane::slurm {

// Receives one element of the array and its position: an object, ready to iterate, or nullptr
// for anything else (validated as a whole value already). Returns why it failed, if it did.
using RecordSink =
    std::function<std::optional<Error>(simdjson::ondemand::object* record, size_t index)>;

// Calls `sink` for every element of the array that starts at `begin`, in order, and returns
// the offset one past the array's ']'. A batch starts with `batch_bytes` of the answer;
// `parser` indexes the batches (the caller keeps it, to reuse its buffers). REQUIRES:
// text[begin] == '['; kJsonPadding readable bytes after `text`. Errors: "slurm.bad_response"
// naming `key[i]`, or the sink's own.
Result<size_t> forEachRecordInBatches(std::string_view text, size_t begin, std::string_view key,
                                      size_t batch_bytes, simdjson::ondemand::parser& parser,
                                      const RecordSink& sink);

}  // namespace tuneplane::slurm
