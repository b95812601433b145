#include "slurm/answer_decoder.h"

#include <simdjson.h>

#include <charconv>

#include "slurm/json_fields.h"
#include "slurm/json_spans.h"
#include "slurm/record_batches.h"
#include "slurm/record_decoders.h"

namespace tuneplane::slurm {
namespace {

namespace ondemand = simdjson::ondemand;
using json_fields::atEnd;
using json_fields::checkScalar;
using json_fields::checkSkippedArray;
using json_fields::indexed;
using json_fields::rawKey;
using json_fields::readNoVal;
using json_fields::readObject;
using json_fields::readString;
using records::Failure;
using records::malformed;
using simdjson::error_code;
using simdjson::SUCCESS;
using Type = ondemand::json_type;

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING);

// `inner`'s field, placed inside `outer` ("jobs[3]" + "exit_code" → "jobs[3].exit_code").
tl::unexpected<Error> within(const std::string& outer, Error inner) {
  if (inner.field.empty()) {
    inner.field = outer;
  } else if (inner.field.front() != '[') {
    inner.field = outer + "." + inner.field;
  } else {
    inner.field = outer + inner.field;
  }
  return tl::unexpected(std::move(inner));
}

// simdjson parsers kept per thread between answers: the control loop decodes a state list
// every cycle, and parsers made afresh map and fault their buffers in again each time. They
// hold what the largest answer parsed whole needs (whole_answer_limit bounds it) and one batch.
struct Parsers {
  ondemand::parser whole;
  ondemand::parser batch;
};

Parsers& threadParsers() {
  thread_local Parsers parsers;
  return parsers;
}

// What one kind of answer looks like: the top-level array that holds its records (if any)
// and the other top-level members it reads.
class Shape {
 public:
  struct Records {
    std::string_view key;           // "" when the answer has no records array
    bool required = true;           // else a missing array means none
    bool skip_non_objects = false;  // else an element that is not an object is an error
  };
  Shape(Records records, std::string_view answer_field)
      : records_(records), answer_field_(answer_field) {}
  virtual ~Shape() = default;

  const Records& records() const { return records_; }
  // What errors about the answer as a whole name (the old decoder's choice).
  std::string answerField() const { return std::string(answer_field_); }

  // Before the records, with their number (or an estimate); drops those of an earlier
  // duplicate key.
  virtual void startRecords(size_t count) { (void)count; }
  // The fewest bytes a record takes in an answer: how many records `bytes` may hold.
  virtual size_t minRecordBytes() const { return 64; }
  // Per record: a Failure, not a Status (record_decoders.h says why).
  virtual Failure record(ondemand::object& object) {
    (void)object;
    return std::nullopt;
  }
  virtual bool wants(std::string_view key) const {
    (void)key;
    return false;
  }
  virtual Status member(std::string_view key, ondemand::value& value) {
    (void)key;
    (void)value;
    return {};
  }

 private:
  Records records_;
  std::string_view answer_field_;
};

// Records of type R, each decoded by `Decode`; in an answer each takes at least MinBytes.
template <typename R, Failure (*Decode)(ondemand::object&, R&), size_t MinBytes = 64>
class RecordList : public Shape {
 public:
  using Shape::Shape;
  size_t minRecordBytes() const override { return MinBytes; }
  void startRecords(size_t count) override {
    list.clear();
    list.reserve(count);
  }
  Failure record(ondemand::object& object) override {
    list.emplace_back();
    auto failure = Decode(object, list.back());
    if (failure) list.pop_back();
    return failure;
  }
  std::vector<R> list;
};

// `inner` placed inside the record at `key[index]`.
Failure inRecord(std::string_view key, size_t index, Error inner) {
  return within(indexed(key, index), std::move(inner)).value();
}

// One element of the records array: an object is decoded, anything else refused or skipped
// (a skipped scalar or array is validated).
Failure recordAt(Shape& shape, ondemand::value& element, size_t index) {
  const auto& records = shape.records();
  Type type;
  if (auto e = element.type().get(type)) return malformed(indexed(records.key, index), e);
  if (type != Type::object) {
    if (!records.skip_non_objects) {
      return Error{"slurm.bad_response", indexed(records.key, index), "not an object"};
    }
    std::string_view raw;
    const error_code e =
        type == Type::array ? checkSkippedArray(element, raw) : checkScalar(element, type);
    if (e) return malformed(indexed(records.key, index), e);
    return std::nullopt;
  }
  ondemand::object object;
  if (auto e = element.get_object().get(object)) {
    return malformed(indexed(records.key, index), e);
  }
  if (auto failure = shape.record(object)) return inRecord(records.key, index, *failure);
  return std::nullopt;
}

// The same for an element of a batch (record_batches.h): non-objects come validated.
Failure recordAt(Shape& shape, ondemand::object* object, size_t index) {
  const auto& records = shape.records();
  if (object == nullptr) {
    if (records.skip_non_objects) return std::nullopt;
    return Error{"slurm.bad_response", indexed(records.key, index), "not an object"};
  }
  if (auto failure = shape.record(*object)) return inRecord(records.key, index, *failure);
  return std::nullopt;
}

// The records array met in a whole-answer pass; `found` tells whether it was an array. With
// `elsewhere` (an envelope), a value that is not an array is only validated: the records came
// from the array's batches.
Status recordsIn(Shape& shape, ondemand::value& value, size_t answer_bytes, bool& found,
                 bool elsewhere) {
  const std::string key(shape.records().key);
  Type type;
  if (auto e = value.type().get(type)) return tl::unexpected(malformed(key, e));
  found = type == Type::array;
  if (!found || elsewhere) {
    if (auto e = checkScalar(value, type)) return tl::unexpected(malformed(key, e));
    if (!elsewhere) shape.startRecords(0);
    return {};
  }
  // An upper bound from the answer's size, not count_elements(): on an answer that is not in
  // the cache that pass costs as much as decoding.
  shape.startRecords(answer_bytes / shape.minRecordBytes());
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return tl::unexpected(malformed(key, e));
  size_t index = 0;
  for (auto&& item : array) {
    ondemand::value element;
    if (auto e = std::move(item).get(element))
      return tl::unexpected(malformed(indexed(key, index), e));
    if (auto failure = recordAt(shape, element, index++)) return tl::unexpected(*failure);
  }
  return {};
}

// The byte offset simdjson stopped at, for messages about malformed answers.
std::string offsetOf(ondemand::document& doc, std::string_view text) {
  const char* at = nullptr;
  if (doc.current_location().get(at) != SUCCESS || at < text.data()) return "";
  return " (near byte " + std::to_string(at - text.data()) + ")";
}

// The whole answer in one simdjson pass. REQUIRES: kJsonPadding readable bytes after `text`.
// `records_elsewhere`: `text` is the envelope of decodeByRecords, whose records arrays were
// decoded in batches and cut out.
Status decodeWhole(std::string_view text, Shape& shape, bool records_elsewhere) {
  ondemand::parser& parser = threadParsers().whole;
  ondemand::document doc;
  if (auto e = parser.iterate(text.data(), text.size(), text.size() + kJsonPadding).get(doc)) {
    return tl::unexpected(malformed(shape.answerField(), e));
  }
  Type type;
  if (auto e = doc.type().get(type)) {
    return tl::unexpected(malformed(shape.answerField(), e));
  }
  if (type != Type::object)
    return records::badResponse(shape.answerField(), "the answer is not a JSON object");
  ondemand::object top;
  if (auto e = doc.get_object().get(top)) {
    return tl::unexpected(malformed(shape.answerField(), e));
  }
  const auto& records = shape.records();
  bool found = false;
  std::string_view key;
  for (auto&& field : top) {
    ondemand::raw_json_string raw;
    ondemand::value value;
    error_code e = field.key().get(raw);
    if (!e) e = field.value().get(value);
    if (e) {
      Error error = malformed(std::string(key.empty() ? shape.answerField() : key), e);
      error.message += offsetOf(doc, text);
      return tl::unexpected(std::move(error));
    }
    key = rawKey(raw);
    if (!records.key.empty() && key == records.key) {
      auto decoded = recordsIn(shape, value, text.size(), found, records_elsewhere);
      if (!decoded) return decoded;
    } else if (shape.wants(key)) {
      auto decoded = shape.member(key, value);
      if (!decoded) return within(std::string(key), decoded.error());
    }
  }
  if (!atEnd(doc)) {
    return records::badResponse(shape.answerField(),
                                "malformed JSON: content after the answer" + offsetOf(doc, text));
  }
  if (!records.key.empty() && records.required && !found && !records_elsewhere) {
    return records::badResponse(std::string(records.key), "missing array");
  }
  return {};
}

// A large answer, a batch of records at a time: json_spans walks the top level, each records
// array goes to record_batches.h, and the other members the shape reads are parsed together as
// a small envelope. Members it does not read get what a whole-answer pass gives them:
// json_spans checks their structure and strings, simdjson's UTF-8 check the rest.
// REQUIRES: kJsonPadding readable bytes after `text`.
Status decodeByRecords(std::string_view text, Shape& shape, size_t batch_bytes) {
  const auto& records = shape.records();
  RecordSink sink = [&shape](ondemand::object* record, size_t index) {
    return recordAt(shape, record, index);
  };
  auto members = objectMembers(text, records.key, [&](size_t begin) -> Result<size_t> {
    shape.startRecords((text.size() - begin) / shape.minRecordBytes());  // an upper bound
    return forEachRecordInBatches(text, begin, records.key, batch_bytes, threadParsers().batch,
                                  sink);
  });
  if (!members) {
    Error error = members.error();
    if (error.field.empty()) error.field = shape.answerField();
    return tl::unexpected(std::move(error));
  }
  bool found = false;  // the last records member is an array, as a whole-answer pass decides
  std::string envelope = "{";
  for (const JsonMember& member : *members) {
    const bool is_records = !records.key.empty() && member.key == records.key;
    const bool is_array = text[member.value.begin] == '[';
    if (is_records) found = is_array;
    if (is_records ? !is_array : shape.wants(member.key)) {
      if (envelope.size() > 1) envelope += ',';
      envelope.append("\"").append(member.key).append("\":");
      envelope.append(text.substr(member.value.begin, member.value.end - member.value.begin));
    } else if (!is_records) {
      const size_t begin = static_cast<size_t>(member.key.data() - text.data());
      if (!simdjson::validate_utf8(text.data() + begin, member.value.end - begin)) {
        return tl::unexpected(malformed(std::string(member.key), simdjson::UTF8_ERROR));
      }
    }
  }
  envelope += '}';
  envelope.reserve(envelope.size() + kJsonPadding);
  if (auto decoded = decodeWhole(envelope, shape, true); !decoded) return decoded;
  if (!found) shape.startRecords(0);
  if (!records.key.empty() && records.required && !found) {
    return records::badResponse(std::string(records.key), "missing array");
  }
  return {};
}

Status decode(AnswerBytes bytes, Shape& shape, const DecodeOptions& options) {
  std::string_view text = bytes.text();
  simdjson::padded_string copy;
  if (!bytes.padded()) {
    copy = simdjson::padded_string(text);
    text = std::string_view(copy.data(), copy.size());
  }
  if (text.size() > options.whole_answer_limit) {
    return decodeByRecords(text, shape, options.batch_bytes);
  }
  auto whole = decodeWhole(text, shape, false);
  if (whole || shape.records().key.empty() || whole.error().field != shape.answerField() ||
      whole.error().message.rfind("malformed JSON", 0) != 0) {
    return whole;
  }
  // simdjson's first stage refuses a truncated answer (an unclosed string) as a whole, before
  // any record is read, and a bracket missing at the end shows only at the end: the
  // record-at-a-time path says which record it is. Errors only, so its cost does not matter.
  if (auto located = decodeByRecords(text, shape, options.batch_bytes); !located) return located;
  return whole;
}

// --- The answers -------------------------------------------------------------------------

// The fewest bytes a record of each kind takes in an answer (compact JSON), for reserving:
// an upper bound on the count costs address space only, a regrowth of 10 MB of records
// costs its copy and RSS.
using JobList = RecordList<JobRecord, records::decodeJobRecord, 2048>;

class ListingShape : public JobList {
 public:
  ListingShape() : JobList({"jobs"}, "jobs") {}
  bool wants(std::string_view key) const override {
    return key == "last_update" || key == "warnings";
  }
  Status member(std::string_view key, ondemand::value& value) override {
    if (key == "warnings") {
      if (auto failure = records::readMessages(value, warnings)) return tl::unexpected(*failure);
      return {};
    }
    if (auto e = readNoVal(value, last_update)) return tl::unexpected(malformed("", e));
    return {};
  }
  NoValNumber last_update;
  std::vector<SlurmMessage> warnings;
};

// `/jobs/state/`: entries go straight into the list's compact form (job_state_list.h).
class StateList : public Shape {
 public:
  StateList() : Shape({"jobs"}, "jobs") {}
  size_t minRecordBytes() const override { return 24; }
  void startRecords(size_t count) override {
    list.clear();
    list.reserve(count);
  }
  Failure record(ondemand::object& object) override {
    return records::decodeJobStateEntry(object, list);
  }
  JobStateList list;
};
using PartitionList = RecordList<PartitionInfo, records::decodePartitionInfo, 256>;
using NodeList = RecordList<NodeInfo, records::decodeNodeInfo, 256>;

class MessageList : public RecordList<SlurmMessage, records::decodeMessage> {
 public:
  explicit MessageList(std::string_view key)
      : RecordList({key, /*required=*/false, /*skip_non_objects=*/true}, key) {}
};

class CancelShape : public Shape {
 public:
  CancelShape() : Shape({"status", false, true}, "status") {}
  void startRecords(size_t count) override {
    refusals.clear();
    refusals.reserve(count);
  }
  Failure record(ondemand::object& object) override {
    SlurmMessage message;
    bool refused = false;
    auto failure = records::decodeCancelEntry(object, message, refused);
    if (!failure && refused) refusals.push_back(std::move(message));
    return failure;
  }
  std::vector<SlurmMessage> refusals;
};

class PingShape : public RecordList<ControllerPing, records::decodeControllerPing> {
 public:
  PingShape() : RecordList({"pings"}, "pings") {}
  bool wants(std::string_view key) const override { return key == "meta"; }
  Status member(std::string_view, ondemand::value& value) override {
    auto e = readObject(value, [&](std::string_view key, ondemand::value& part) {
      if (key == "slurm") {
        release.clear();
        cluster.clear();
        return readObject(part, [&](std::string_view k, ondemand::value& v) {
          if (k == "release") return readString(v, release);
          if (k == "cluster") return readString(v, cluster);
          return SUCCESS;
        });
      }
      if (key != "plugin") return SUCCESS;
      data_parser.clear();
      return readObject(part, [&](std::string_view k, ondemand::value& v) {
        return k == "data_parser" ? readString(v, data_parser) : SUCCESS;
      });
    });
    if (e) return tl::unexpected(malformed("", e));
    return {};
  }
  std::string release, cluster, data_parser;
};

// A non-string step_id as the JSON it was (the old decoder dumped it).
error_code rawJson(ondemand::value& value, std::string& out) {
  Type type;
  if (auto e = value.type().get(type)) return e;
  std::string_view text;
  if (type == Type::object) {
    ondemand::object object;
    if (auto e = value.get_object().get(object)) return e;
    if (auto e = object.raw_json().get(text)) return e;
  } else if (type == Type::array) {
    ondemand::array array;
    if (auto e = value.get_array().get(array)) return e;
    if (auto e = array.raw_json().get(text)) return e;
  } else {
    if (auto e = checkScalar(value, type)) return e;
    text = value.raw_json_token();
    while (!text.empty() && std::string_view(" \t\r\n").find(text.back()) != text.npos) {
      text.remove_suffix(1);
    }
  }
  out.assign(text);
  return SUCCESS;
}

class ReceiptShape : public Shape {
 public:
  ReceiptShape() : Shape({}, "job_id") {}
  bool wants(std::string_view key) const override {
    return key == "job_id" || key == "step_id" || key == "job_submit_user_msg" ||
           key == "warnings" || key == "errors";
  }
  Status member(std::string_view key, ondemand::value& value) override {
    if (key == "warnings" || key == "errors") {
      auto& messages = key == "warnings" ? receipt.warnings : receipt.errors;
      if (auto failure = records::readMessages(value, messages)) return tl::unexpected(*failure);
      return {};
    }
    error_code e = SUCCESS;
    if (key == "job_submit_user_msg") {
      e = readString(value, receipt.job_submit_user_msg);
    } else if (key == "step_id") {
      Type type;
      if ((e = value.type().get(type)) == SUCCESS) {
        e = type == Type::string ? readString(value, receipt.step_id)
                                 : rawJson(value, receipt.step_id);
      }
    } else {
      e = readJobId(value);
    }
    if (e) return tl::unexpected(malformed("", e));
    return {};
  }
  // A number or NoValNumber, or a string of digits.
  error_code readJobId(ondemand::value& value) {
    has_job_id = true;
    job_id.reset();
    Type type;
    if (auto e = value.type().get(type)) return e;
    if (type != Type::string) {
      NoValNumber number;
      auto e = readNoVal(value, number);
      job_id = number.value();
      return e;
    }
    std::string text;
    if (auto e = readString(value, text)) return e;
    uint64_t parsed = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) {
      job_id = static_cast<int64_t>(parsed);
    }
    return SUCCESS;
  }
  SubmitReceipt receipt;
  bool has_job_id = false;
  std::optional<int64_t> job_id;
};

// GET /conf: the preemption settings inside `slurm_conf`, the rest skipped unread.
class ConfShape : public Shape {
 public:
  ConfShape() : Shape({}, "slurm_conf") {}
  bool wants(std::string_view key) const override { return key == "slurm_conf"; }
  Status member(std::string_view, ondemand::value& value) override {
    found = true;
    config = {};
    auto e = readObject(value, [&](std::string_view key, ondemand::value& v) {
      if (key == "PreemptType") return readString(v, config.preempt_type);
      if (key == "PreemptMode") return json_fields::readStrings(v, config.preempt_mode);
      if (key == "PreemptParameters") return json_fields::readStrings(v, config.preempt_parameters);
      return SUCCESS;
    });
    if (e) return tl::unexpected(malformed("", e));
    return {};
  }
  ControllerConfig config;
  bool found = false;
};

// The records of an answer that is a list of them.
template <typename ListShape>
Result<std::remove_reference_t<decltype(ListShape::list)>> listOf(ListShape shape,
                                                                  AnswerBytes answer,
                                                                  const DecodeOptions& options) {
  if (auto decoded = decode(answer, shape, options); !decoded) {
    return tl::unexpected(decoded.error());
  }
  return std::move(shape.list);
}

}  // namespace

Result<std::vector<JobRecord>> decodeJobs(AnswerBytes answer, const DecodeOptions& options) {
  return listOf(JobList({"jobs"}, "jobs"), answer, options);
}

Result<JobListing> decodeJobListing(AnswerBytes answer, const DecodeOptions& options) {
  ListingShape shape;
  if (auto decoded = decode(answer, shape, options); !decoded)
    return tl::unexpected(decoded.error());
  JobListing out;
  out.jobs = std::move(shape.list);
  out.last_update = shape.last_update;
  out.warnings = std::move(shape.warnings);
  for (const auto& w : out.warnings) {
    if (w.description.find("No job changes") != std::string::npos) out.unchanged = true;
  }
  return out;
}

Result<JobStateList> decodeJobStates(AnswerBytes answer, const DecodeOptions& options) {
  return listOf(StateList(), answer, options);
}

Result<SubmitReceipt> decodeSubmitReceipt(AnswerBytes answer, const DecodeOptions& options) {
  ReceiptShape shape;
  if (auto decoded = decode(answer, shape, options); !decoded)
    return tl::unexpected(decoded.error());
  if (!shape.has_job_id) return records::badResponse("job_id", "missing from the receipt");
  if (!shape.job_id || *shape.job_id <= 0)
    return records::badResponse("job_id", "not a positive number");
  shape.receipt.job_id = static_cast<uint64_t>(*shape.job_id);
  return std::move(shape.receipt);
}

Result<PingResult> decodePing(AnswerBytes answer, const DecodeOptions& options) {
  PingShape shape;
  if (auto decoded = decode(answer, shape, options); !decoded)
    return tl::unexpected(decoded.error());
  PingResult out;
  out.controllers = std::move(shape.list);
  out.release = std::move(shape.release);
  out.cluster = std::move(shape.cluster);
  out.data_parser = std::move(shape.data_parser);
  return out;
}

Result<std::vector<PartitionInfo>> decodePartitions(AnswerBytes answer,
                                                    const DecodeOptions& options) {
  return listOf(PartitionList({"partitions"}, "partitions"), answer, options);
}

Result<std::vector<NodeInfo>> decodeNodes(AnswerBytes answer, const DecodeOptions& options) {
  return listOf(NodeList({"nodes"}, "nodes"), answer, options);
}

Result<ControllerConfig> decodeControllerConfig(AnswerBytes answer, const DecodeOptions& options) {
  ConfShape shape;
  if (auto decoded = decode(answer, shape, options); !decoded)
    return tl::unexpected(decoded.error());
  if (!shape.found) return records::badResponse("slurm_conf", "missing from the answer");
  return std::move(shape.config);
}

Result<std::vector<SlurmMessage>> decodeMessages(AnswerBytes answer, std::string_view key,
                                                 const DecodeOptions& options) {
  return listOf(MessageList(key), answer, options);
}

Result<std::vector<SlurmMessage>> decodeCancelStatus(AnswerBytes answer,
                                                     const DecodeOptions& options) {
  CancelShape shape;
  if (auto decoded = decode(answer, shape, options); !decoded)
    return tl::unexpected(decoded.error());
  return std::move(shape.refusals);
}

}  // namespace tuneplane::slurm
