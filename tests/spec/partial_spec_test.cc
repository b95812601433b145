// PartialSpec::readable: which fields a structural error leaves unjudgeable. One row per
// case: the errors found, a field asked about, and the answer.
#include "spec/partial_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneplane::spec {
namespace {

struct PartialRow {
  const char* rule;
  std::vector<Error> errors;
  std::string field;
  bool readable;
};

Error err(const char* code, const char* field) {
  return Error{code, field, "m"};
}

std::vector<PartialRow> rows() {
  return {
      {"no errors", {}, "spec.framework.runtime_id", true},
      {"the field itself", {err("spec.wrong_type", "kind")}, "kind", false},
      {"a missing required field",
       {err("spec.missing_field", "spec.framework.command")},
       "spec.framework.command",
       false},
      {"inside a map that is not one",
       {err("spec.wrong_type", "spec.framework")},
       "spec.framework.runtime_id",
       false},
      {"inside a list entry",
       {err("spec.wrong_type", "spec.resources.pools[1]")},
       "spec.resources.pools[1].nodes",
       false},
      {"another entry of the list",
       {err("spec.wrong_type", "spec.resources.pools[1]")},
       "spec.resources.pools[0].nodes",
       true},
      {"an index that only starts alike",
       {err("spec.wrong_type", "spec.resources.pools[1]")},
       "spec.resources.pools[10].nodes",
       true},
      {"a key that only starts alike",
       {err("spec.invalid_name", "spec.framework.name")},
       "spec.framework.names",
       true},
      {"a sibling",
       {err("spec.non_positive", "spec.resources.pools[0].cpus")},
       "spec.resources.pools[0].nodes",
       true},
      {"the list holding a bad entry stays readable",
       {err("spec.non_positive", "spec.resources.pools[0].cpus")},
       "spec.resources.pools",
       true},
      {"an unknown key taints nothing",
       {err("spec.unknown_field", "spec.resources.pools[0].colour")},
       "spec.resources.pools[0]",
       true},
      {"an unknown key is not read either",
       {err("spec.unknown_field", "spec.framework.gpu")},
       "spec.framework.gpu",
       true},
      {"the document is not YAML", {err("spec.parse_error", "")}, "kind", false},
      {"the root is not a map", {err("spec.wrong_type", "")}, "spec.data.volumes", false},
      {"the file cannot be read", {err("spec.unreadable_file", "/tmp/job.yaml")}, "kind", false},
  };
}

TEST(PartialSpec, ReadableTable) {
  for (const PartialRow& row : rows()) {
    SCOPED_TRACE(row.rule);
    PartialSpec partial;
    partial.errors = row.errors;
    EXPECT_EQ(partial.readable(row.field), row.readable) << row.field;
    EXPECT_EQ(partial.complete(), row.errors.empty());
  }
}

}  // namespace
}  // namespace tuneplane::spec
