// A job spec as far as it could be read, with the structural problems found on the way.
// The parser fills every field it could read cleanly and leaves the others at their
// defaults; `readable` tells the two apart, so later checks (launch/'s backend rules) judge
// only values the user really wrote, and a problem is reported once, by the first layer
// that sees it. A plain value; thread-compatible.
#pragma once

#include <string_view>

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
  // `field` uses the errors' path syntax (a.b[0].c).
  bool readable(std::string_view field) const;
};

}  // namespace tuneplane::spec
