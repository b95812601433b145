// A job spec as far as it could be read, with the structural problems found on the way.
// The parser fills every field it could read cleanly and leaves the others at their
// defaults; `readable` tells the two apart, so later checks (launch/'s backend rules) judge
// only values the user really wrote, and a problem is reported once, by the first layer
// that sees it. A plain value; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "spec/job_spec.h"

namespace tuneplane::spec {

struct PartialSpec {
  JobSpec spec;   // every cleanly read field; a field with a problem keeps its default
  Errors errors;  // structural (spec.*), in document order; empty: `spec` is complete

  bool complete() const { return errors.empty(); }

  // False when a structural error concerns `field` itself or a field that contains it
  // ("spec.framework" contains "spec.framework.runtime_id"; "spec.resources.pools[0]"
  // contains "spec.resources.pools[0].nodes"), including a required field that is missing.
  // An unknown_field error makes nothing unreadable: that key is ignored and its siblings
  // are read. A document that could not be read at all (unreadable_file, parse_error, a
  // root that is not a map, document_too_large, too_many_values) makes every field
  // unreadable.
  // `field` uses the errors' path syntax (a.b[0].c). Builds a ReadableFields for the one question;
  // a caller with many fields to ask about keeps one instead.
  bool readable(std::string_view field) const;
};

// PartialSpec::readable for many questions about one spec: the errors that make fields
// unreadable are sorted once, and each question looks up the field and its ancestors, so a
// question costs the field's depth, not the number of errors. A hostile spec within the
// document limits holds thousands of errors (unknown keys, pools missing their fields) and
// launch/'s rules ask about each of thousands of pools: walking every error for every
// question made judging one such spec cost half a second of CPU. Keeps copies of the error
// fields it needs; the PartialSpec may go.
class ReadableFields {
 public:
  explicit ReadableFields(const PartialSpec& partial);

  bool readable(std::string_view field) const;

 private:
  bool nothing_readable_ = false;
  std::vector<std::string> unreadable_;  // sorted error fields, each with everything inside it
};

}  // namespace tuneplane::spec
