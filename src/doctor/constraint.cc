#include "doctor/constraint.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace tuneplane::doctor {
namespace {

using Node = ConstraintNode;
using NodePtr = std::unique_ptr<ConstraintNode>;

bool isOperator(char c) {
  return c == '&' || c == '|' || c == ',' || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '*' || c == '!';
}

// Recursive descent over the grammar in constraint.h. Nesting is bounded so that a hostile
// site file cannot exhaust the stack.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<NodePtr> parseAll() {
    auto root = parseExpr(0);
    if (!root) return root;
    if (pos_ < text_.size()) return error(fmt::format("unexpected '{}'", text_[pos_]));
    return root;
  }

  std::set<std::string> features;
  bool uses_counts = false;

 private:
  static constexpr int kMaxDepth = 32;

  tl::unexpected<Error> error(const std::string& what) const {
    return fail("doctor.constraint_syntax", "",
                fmt::format("{} at position {} of '{}'", what, pos_, text_));
  }

  Result<NodePtr> combine(Node::Kind kind, int depth, const std::string& ops) {
    auto first = kind == Node::Kind::kOr ? parseTerm(depth) : parseFactor(depth);
    if (!first) return first;
    if (pos_ >= text_.size() || ops.find(text_[pos_]) == std::string::npos) return first;
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->operands.push_back(std::move(*first));
    while (pos_ < text_.size() && ops.find(text_[pos_]) != std::string::npos) {
      ++pos_;
      auto next = kind == Node::Kind::kOr ? parseTerm(depth) : parseFactor(depth);
      if (!next) return next;
      node->operands.push_back(std::move(*next));
    }
    return node;
  }

  Result<NodePtr> parseExpr(int depth) { return combine(Node::Kind::kOr, depth, "|"); }
  Result<NodePtr> parseTerm(int depth) { return combine(Node::Kind::kAnd, depth, "&,"); }

  Result<NodePtr> parseFactor(int depth) {
    if (pos_ >= text_.size()) return error("expected a feature, '(' or '['");
    const char c = text_[pos_];
    if (c == '(' || c == '[') {
      if (depth >= kMaxDepth) return error("nested too deeply");
      const char close = c == '(' ? ')' : ']';
      ++pos_;
      auto inner = parseExpr(depth + 1);
      if (!inner) return inner;
      if (pos_ >= text_.size() || text_[pos_] != close) {
        return error(fmt::format("expected '{}'", close));
      }
      ++pos_;
      return inner;
    }
    if (c == '!') return error("'!' (NOT) is not understood by doctor");
    if (isOperator(c)) return error(fmt::format("expected a feature before '{}'", c));
    const size_t start = pos_;
    while (pos_ < text_.size() && !isOperator(text_[pos_]) &&
           !std::isspace(static_cast<unsigned char>(text_[pos_])) &&
           static_cast<unsigned char>(text_[pos_]) >= 0x20) {
      ++pos_;
    }
    if (pos_ == start) return error("a feature name cannot contain white space or control bytes");
    auto node = std::make_unique<Node>();
    node->feature = std::string(text_.substr(start, pos_ - start));
    features.insert(node->feature);
    if (pos_ < text_.size() && text_[pos_] == '*') {
      ++pos_;
      const size_t digits = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == digits || pos_ - digits > 6) return error("expected a node count after '*'");
      node->count = std::stoi(std::string(text_.substr(digits, pos_ - digits)));
      uses_counts = true;
    }
    return node;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool evaluate(const Node& node, const std::vector<std::string>& have) {
  switch (node.kind) {
    case Node::Kind::kFeature:
      return std::find(have.begin(), have.end(), node.feature) != have.end();
    case Node::Kind::kAnd:
      return std::all_of(node.operands.begin(), node.operands.end(),
                         [&](const NodePtr& o) { return evaluate(*o, have); });
    case Node::Kind::kOr:
      return std::any_of(node.operands.begin(), node.operands.end(),
                         [&](const NodePtr& o) { return evaluate(*o, have); });
  }
  return false;
}

}  // namespace

Result<Constraint> Constraint::parse(std::string_view text) {
  Parser parser(text);
  auto root = parser.parseAll();
  if (!root) return tl::unexpected(root.error());
  Constraint out;
  out.root_ = std::shared_ptr<const ConstraintNode>(std::move(*root));
  out.features_ = std::move(parser.features);
  out.uses_counts_ = parser.uses_counts;
  return out;
}

bool Constraint::matches(const std::vector<std::string>& node_features) const {
  return root_ && evaluate(*root_, node_features);
}

}  // namespace tuneplane::doctor
