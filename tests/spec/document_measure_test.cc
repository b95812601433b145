// The document limits, measured with YAML aliases expanded before anything is built
// (spec/document_measure.h): the alias attacks of issue 16 refused with their code and
// field, the parser's peak memory on the worst specs at the API's body limit, and anchors
// and aliases within the limits still read as before.
#include "spec/document_measure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "spec/spec_parser.h"
#include "support/subprocess.h"
#include "support/yaml_aliases.h"

namespace tuneplane::spec {
namespace {

// The API's default body limit (server.max_body_bytes): the largest spec a client can send.
constexpr std::size_t kBodyLimit = 1024 * 1024;
constexpr long kPeakLimitKiB = 64 * 1024;

// A valid CPU-only spec whose args are `args` (flow list text).
std::string specWithArgs(const std::string& args) {
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata: {name: job}\n"
         "spec:\n"
         "  framework:\n"
         "    name: custom\n"
         "    task: custom\n"
         "    runtime_id: custom-python-3.11\n"
         "    command: [python, run.py]\n"
         "    args: [" +
         args +
         "]\n"
         "  resources:\n"
         "    pools: [{name: main, cpus: 1, memory_gb: 1}]\n";
}

// Issue 16's attack: args[0] anchors a string of `bytes`, then `aliases` aliases repeat it.
std::string aliasAttack(std::size_t bytes, std::size_t aliases) {
  std::string args = "&a " + std::string(bytes, 'x');
  args.reserve(args.size() + aliases * 4);
  for (std::size_t i = 0; i < aliases; ++i) args += ", *a";
  return specWithArgs(args);
}

// The same, with as many aliases as fit in `body` bytes.
std::string aliasAttackOfSize(std::size_t bytes, std::size_t body) {
  const std::size_t base = aliasAttack(bytes, 0).size();
  return aliasAttack(bytes, (body - base) / 4);
}

TEST(DocumentLimits, TheIssuesAliasSpecsAreRefusedWhereTheLimitIsCrossed) {
  struct Case {
    const char* what;
    std::string text;
    const char* field;  // 1 MiB holds ten 100,000-byte copies, or two of 400,000
  };
  const Case cases[] = {
      {"104 KB: a 100 KB string a thousand times", aliasAttack(100000, 1000),
       "spec.framework.args[10]"},
      {"406 KB: a 400 KB string a thousand times", aliasAttack(400000, 1000),
       "spec.framework.args[2]"},
      {"101 KB: the one POST /v1/jobs staged as 30 MB", aliasAttack(100000, 250),
       "spec.framework.args[10]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const PartialSpec partial = parsePartialJobSpec(c.text);
    ASSERT_EQ(partial.errors.size(), 1u);
    EXPECT_EQ(partial.errors[0].code, "spec.document_too_large");
    EXPECT_EQ(partial.errors[0].field, c.field);
    EXPECT_THAT(partial.errors[0].message, ::testing::HasSubstr("1 MiB"));
    EXPECT_THAT(partial.errors[0].message, ::testing::Not(::testing::HasSubstr("xxxx")));
    // Nothing was read, so no later layer judges defaults as if the user wrote them.
    EXPECT_FALSE(partial.readable("kind"));
    EXPECT_FALSE(partial.readable("spec.framework.runtime_id"));
    EXPECT_TRUE(partial.spec.framework.args.empty());
  }
}

TEST(DocumentLimits, NestedAliasesAreRefusedByTheirValueCount) {
  const PartialSpec partial = parsePartialJobSpec(test::nestedAliases() + specWithArgs("a"));
  ASSERT_EQ(partial.errors.size(), 1u);
  EXPECT_EQ(partial.errors[0].code, "spec.too_many_values");
  // Crossed while reading the fifth level (10^5 values), in its list.
  EXPECT_THAT(partial.errors[0].field, ::testing::StartsWith("x4["));
}

TEST(DocumentLimits, AnAliasInsideItsOwnAnchorIsRefused) {
  for (const char* text : {"a: &a [x, *a]\n", "a: &m {k: *m}\n"}) {
    SCOPED_TRACE(text);
    const auto breach = measureDocument(text, kSpecDocumentLimits);
    ASSERT_TRUE(breach.has_value());
    EXPECT_EQ(breach->kind, "document_too_large");
    EXPECT_THAT(breach->message, ::testing::HasSubstr("contains it"));
  }
}

TEST(DocumentLimits, CountsTextAndValuesExactlyToTheLimit) {
  const DocumentLimits limits{10, 7};
  // Root map, key, value: 3 values; "ab" + "cdefgh" = 8 bytes.
  EXPECT_FALSE(measureDocument("ab: cdefgh\n", limits).has_value());
  // An alias adds its anchor's whole size: a list of two scalars is 3 values and 2 bytes,
  // so root (1) + a,[x,y] (4) + b,*l (1 + 3) = 9 values: over 7 at the alias.
  const auto values = measureDocument("a: &l [x, y]\nb: *l\n", limits);
  ASSERT_TRUE(values.has_value());
  EXPECT_EQ(values->kind, "too_many_values");
  EXPECT_EQ(values->field, "b");
  // 5 + 5 bytes fit; one more byte in the alias' anchor does not.
  EXPECT_FALSE(measureDocument("- &s abcde\n- *s\n", {10, 100}).has_value());
  const auto text = measureDocument("- &s abcdef\n- *s\n", {10, 100});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->kind, "document_too_large");
  EXPECT_EQ(text->field, "[1]");
  // Keys count as text, and a long key is reported at its map.
  const auto key = measureDocument("m: {" + std::string(20, 'k') + ": 1}\n", {10, 100});
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->field, "m");
}

TEST(DocumentLimits, SyntaxErrorsAreParseErrorsWithTheirPlace) {
  const auto breach = measureDocument("a: [1,\nb: *undefined\n", kSpecDocumentLimits);
  ASSERT_TRUE(breach.has_value());
  EXPECT_EQ(breach->kind, "parse_error");
  EXPECT_THAT(breach->message, ::testing::HasSubstr("line"));
  const auto alias = measureDocument("a: *nowhere\n", kSpecDocumentLimits);
  ASSERT_TRUE(alias.has_value());
  EXPECT_EQ(alias->kind, "parse_error");
}

TEST(DocumentLimits, AnchorsAndAliasesWithinTheLimitsReadAsWritten) {
  const auto spec = parseJobSpec(R"(apiVersion: tuneplane.io/v1
kind: TrainingJob
metadata:
  name: job
  labels: {team: &team nlp, owner: *team}
spec:
  framework:
    name: custom
    task: custom
    runtime_id: custom-python-3.11
    command: &cmd [python, train.py]
    args: [--data, &d /datasets/x, --eval, *d]
    env: {DATA: *d, HF_HOME: &hf /models/hf, CACHE: *hf}
  resources:
    pools:
      - &pool {name: main, cpus: 4, memory_gb: 8}
)");
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  EXPECT_EQ(spec->metadata.labels.at("owner"), "nlp");
  EXPECT_EQ(spec->framework.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(spec->framework.args,
            (std::vector<std::string>{"--data", "/datasets/x", "--eval", "/datasets/x"}));
  EXPECT_EQ(spec->framework.env.at("DATA"), "/datasets/x");
  EXPECT_EQ(spec->framework.env.at("CACHE"), "/models/hf");
  EXPECT_EQ(spec->resources.pools.at(0).cpus, 4);
}

TEST(DocumentLimits, TextJustUnderTheLimitThroughAliasesIsRead) {
  // Eight copies of a 131,000-byte argument: 1,048,000 bytes once expanded, within 1 MiB and
  // each entry within the kernel's per-string limit.
  std::string args = "&a " + std::string(131000, 'y');
  for (int i = 0; i < 7; ++i) args += ", *a";
  const auto spec = parseJobSpec(specWithArgs(args));
  ASSERT_TRUE(spec.has_value()) << spec.error().front().describe();
  ASSERT_EQ(spec->framework.args.size(), 8u);
  EXPECT_EQ(spec->framework.args[7].size(), 131000u);
}

// --- peak memory ------------------------------------------------------------------------

long maxRssKiB() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

// Parses `text` in a forked child and returns its peak RSS growth in KiB: the child's
// high-water mark is reset to its current RSS first (/proc/self/clear_refs, "5"), so
// getrusage's ru_maxrss before the parse is the child's baseline (the test binary, and under
// ASan its shadow memory) and after it the peak; the figure is what the parse itself
// touched. -1 when the child failed.
long parsePeakKiB(const std::string& text) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const auto code = test::runInChild(
      [&] {
        ::close(fds[0]);
        std::ofstream("/proc/self/clear_refs") << "5";
        const long before = maxRssKiB();
        const PartialSpec partial = parsePartialJobSpec(text);
        const long grown = maxRssKiB() - before;
        const std::string out = std::to_string(grown) + " " + std::to_string(partial.errors.size());
        return ::write(fds[1], out.data(), out.size()) == static_cast<ssize_t>(out.size()) ? 0 : 1;
      },
      "parse a spec and measure its peak RSS");
  ::close(fds[1]);
  char buffer[64] = {};
  const ssize_t n = ::read(fds[0], buffer, sizeof buffer - 1);
  ::close(fds[0]);
  if (code != 0 || n <= 0) return -1;
  return std::stol(buffer);
}

TEST(DocumentLimits, PeakMemoryOfTheWorstSpecsAtTheBodyLimitStaysUnder64MiB) {
  std::string many_values = "x: [";
  while (many_values.size() < 16000 * 3) many_values += "a, ";
  many_values += "]\n";
  std::string max_text = "&a " + std::string(131000, 'y');
  for (int i = 0; i < 7; ++i) max_text += ", *a";
  struct Case {
    const char* what;
    std::string text;
  };
  const Case cases[] = {
      {"a 100 KB string aliased to fill 1 MiB", aliasAttackOfSize(100000, kBodyLimit)},
      {"a 1 KB string aliased to fill 1 MiB", aliasAttackOfSize(1000, kBodyLimit)},
      {"billion laughs padded to 1 MiB",
       test::nestedAliases() + "pad: '" +
           std::string(kBodyLimit - test::nestedAliases().size() - 16, 'p') + "'\n"},
      {"16,000 values (within the limit, built by yaml-cpp)", many_values + specWithArgs("a")},
      {"1 MiB of argument text through aliases (accepted)", specWithArgs(max_text)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_LE(c.text.size(), kBodyLimit);
    const long peak = parsePeakKiB(c.text);
    ASSERT_GE(peak, 0) << "the child failed";
    std::fprintf(stderr, "[ measure  ] %s: %zu bytes, peak RSS +%ld KiB\n", c.what, c.text.size(),
                 peak);
    EXPECT_LT(peak, kPeakLimitKiB);
  }
}

}  // namespace
}  // namespace tuneplane::spec
