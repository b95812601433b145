// Fuzz target: the decoders of slurmrestd's answers (slurm/answer_decoder.h), every route the
// Slurm client decodes: GET /job/{id}, GET /jobs/, GET /jobs/state/, POST /job/submit,
// GET /ping/, GET /partitions/, GET /nodes/, the errors[]/warnings[] of any answer and
// DELETE /job/{id}'s status[]. Each input goes through every decoder on both paths: the
// whole answer in one simdjson pass, and record by record in small batches (cutting records
// and strings everywhere), handed over both unpadded (the decoder copies it) and in a buffer
// with the parser's padding after it (decoded in place). Properties, besides no crash, leak,
// overflow or undefined behaviour:
//  - the record path is never more lenient than the whole pass, and where both accept they
//    decode the same value. The reverse may differ: simdjson's On-Demand parser checks a
//    value it skips only for balanced brackets, closed strings and UTF-8, and tolerates some
//    damage there (e.g. `"warnings": ]`, or a stray `"x":` after a skipped string: simdjson
//    issue 1742), while json_spans checks the top level and the record boundaries strictly;
//  - unpadded and padded bytes decode alike;
//  - every refusal is "slurm.bad_response" with a message;
//  - an accepted answer cut short (halfway, and before its last byte) is refused.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "slurm/answer_decoder.h"

namespace tuneplane::fuzz {
namespace {

using slurm::AnswerBytes;
using slurm::DecodeOptions;

constexpr DecodeOptions kWhole{std::size_t{1} << 30};

// The bytes in a std::string with the parser's padding in its spare capacity, as the
// transport leaves an answer.
std::string paddedCopy(std::string_view text) {
  std::string out;
  out.reserve(text.size() + slurm::kJsonPadding);
  out.assign(text);
  return out;
}

template <typename T>
void checkRefusal(const Result<T>& result, const char* route, const char* path) {
  if (result) return;
  FUZZ_CHECK(result.error().code == "slurm.bad_response",
             std::string(route) + " (" + path + "): " + result.error().describe());
  FUZZ_CHECK(!result.error().message.empty(), std::string(route) + " refused without a message");
}

std::string_view trimmedEnd(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

template <typename Decode>
void checkRoute(const char* route, std::string_view text, Decode decode) {
  const DecodeOptions by_record{0, 16 + text.size() % 97};
  const std::string padded = paddedCopy(text);
  const auto whole = decode(AnswerBytes(text), kWhole);
  const auto whole_in_place = decode(AnswerBytes(padded), kWhole);
  const auto records = decode(AnswerBytes(padded), by_record);
  checkRefusal(whole, route, "whole");
  checkRefusal(records, route, "by record");
  FUZZ_CHECK(
      whole.has_value() == whole_in_place.has_value() && (!whole || *whole == *whole_in_place),
      std::string(route) + ": padded and unpadded bytes decode differently");
  if (records) {
    FUZZ_CHECK(whole.has_value(), std::string(route) + ": the record path accepted what the " +
                                      "whole pass refused: " + whole.error().describe());
    FUZZ_CHECK(*whole == *records, std::string(route) + ": the two paths decode differently");
  }
  if (!whole) return;
  const std::string_view body = trimmedEnd(text);
  for (std::size_t cut : {body.size() / 2, body.size() == 0 ? 0 : body.size() - 1}) {
    const std::string prefix = paddedCopy(body.substr(0, cut));
    FUZZ_CHECK(!decode(AnswerBytes(prefix), kWhole),
               std::string(route) + ": accepted the answer cut at " + std::to_string(cut));
    FUZZ_CHECK(
        !decode(AnswerBytes(prefix), by_record),
        std::string(route) + ": the record path accepted the answer cut at " + std::to_string(cut));
  }
}

}  // namespace

int testOneAnswer(std::string_view text) {
  using namespace slurm;
  checkRoute("GET /job/{id}", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeJobs(b, o); });
  checkRoute("GET /jobs/", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeJobListing(b, o); });
  checkRoute("GET /jobs/state/", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeJobStates(b, o); });
  checkRoute("POST /job/submit", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeSubmitReceipt(b, o); });
  checkRoute("GET /ping/", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodePing(b, o); });
  checkRoute("GET /partitions/", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodePartitions(b, o); });
  checkRoute("GET /nodes/", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeNodes(b, o); });
  checkRoute("errors[]", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeMessages(b, "errors", o); });
  checkRoute("warnings[]", text, [](AnswerBytes b, const DecodeOptions& o) {
    return decodeMessages(b, "warnings", o);
  });
  checkRoute("DELETE /job/{id}", text,
             [](AnswerBytes b, const DecodeOptions& o) { return decodeCancelStatus(b, o); });
  return 0;
}

}  // namespace tuneplane::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tuneplane::fuzz::testOneAnswer(tuneplane::fuzz::asText(data, size));
}
