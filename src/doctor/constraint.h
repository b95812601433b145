// Slurm's --constraint expressions (a GPU series' `slurm_constraint`), parsed so doctor can
// ask "does this node's feature list satisfy it?" without submitting a job. Grammar:
//
//   expr    := term   ( '|' term )*            OR
//   term    := factor ( ('&' | ',') factor )*  AND (',' is the simulator's and old Slurm's AND)
//   factor  := '(' expr ')'                    grouping
//            | '[' expr ']'                    "matching OR": for one node, a plain group
//            | FEATURE [ '*' COUNT ]           a node feature, optionally with a node count
//   FEATURE := one or more characters other than & | , ( ) [ ] * ! and white space
//
// '&' binds tighter than '|' (write parentheses when mixing them, as Slurm's manual does).
// Counts (`fat*4`) ask for that many nodes with the feature; a one-node question cannot
// judge them, so a caller sees `uses_counts` and judges each feature on its own. '!' (NOT)
// and anything else are refused with the position, so a constraint doctor cannot read is
// reported as such instead of being judged wrongly. Pure; plain values.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::doctor {

struct ConstraintNode {
  enum class Kind { kFeature, kAnd, kOr };
  Kind kind = Kind::kFeature;
  std::string feature;                                    // kFeature
  int count = 0;                                          // kFeature: `*N`, 0 when absent
  std::vector<std::unique_ptr<ConstraintNode>> operands;  // kAnd / kOr: two or more
};

class Constraint {
 public:
  // Errors: "doctor.constraint_syntax" with the 0-based position and what was expected.
  static Result<Constraint> parse(std::string_view text);

  // Whether a node with these features satisfies the expression (counts ignored).
  bool matches(const std::vector<std::string>& node_features) const;
  // Every feature the expression names, sorted, each once.
  const std::set<std::string>& features() const { return features_; }
  bool usesCounts() const { return uses_counts_; }

 private:
  std::shared_ptr<const ConstraintNode> root_;  // shared: a Constraint is a cheap value
  std::set<std::string> features_;
  bool uses_counts_ = false;
};

}  // namespace tuneplane::doctor
