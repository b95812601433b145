// The stored strings of phases and causes are a contract (API, events, the database): each
// value has exactly the string below, parses back to itself, and nothing else parses.
#include "phase/phases.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tuneplane::phase {
namespace {

template <typename Enum>
struct Row {
  Enum value;
  const char* text;
  bool terminal;
};

const std::vector<Row<JobPhase>> kJobRows = {
    {JobPhase::kPending, "Pending", false},
    {JobPhase::kStaging, "Staging", false},
    {JobPhase::kSubmitting, "Submitting", false},
    {JobPhase::kSubmitUnknown, "SubmitUnknown", false},
    {JobPhase::kQueued, "Queued", false},
    {JobPhase::kRunning, "Running", false},
    {JobPhase::kReleasing, "Releasing", false},
    {JobPhase::kRetrying, "Retrying", false},
    {JobPhase::kCancelling, "Cancelling", false},
    {JobPhase::kUnknown, "Unknown", false},
    {JobPhase::kSucceeded, "Succeeded", true},
    {JobPhase::kFailed, "Failed", true},
    {JobPhase::kCancelled, "Cancelled", true},
};

const std::vector<Row<AttemptPhase>> kAttemptRows = {
    {AttemptPhase::kStaging, "Staging", false},
    {AttemptPhase::kSubmitting, "Submitting", false},
    {AttemptPhase::kSubmitUnknown, "SubmitUnknown", false},
    {AttemptPhase::kSubmitted, "Submitted", false},
    {AttemptPhase::kQueued, "Queued", false},
    {AttemptPhase::kRunning, "Running", false},
    {AttemptPhase::kReleasing, "Releasing", false},
    {AttemptPhase::kCancelling, "Cancelling", false},
    {AttemptPhase::kUnknown, "Unknown", false},
    {AttemptPhase::kSucceeded, "Succeeded", true},
    {AttemptPhase::kFailed, "Failed", true},
    {AttemptPhase::kCancelled, "Cancelled", true},
    {AttemptPhase::kAbandoned, "Abandoned", true},
};

const std::vector<std::pair<EndCause, const char*>> kCauseRows = {
    {EndCause::kNone, "none"},
    {EndCause::kUser, "user"},
    {EndCause::kInfrastructure, "infrastructure"},
    {EndCause::kPreempted, "preempted"},
    {EndCause::kCancelled, "cancelled"},
    {EndCause::kExternalCancel, "external_cancel"},
    {EndCause::kRejected, "rejected"},
    {EndCause::kAbandoned, "abandoned"},
    {EndCause::kUnobserved, "unobserved"},
};

// Every row's string, parse and terminality; no two rows share a string.
template <typename Enum, typename Parse>
void expectTable(const std::vector<Row<Enum>>& rows, Parse parse) {
  std::set<std::string> seen;
  for (const auto& row : rows) {
    EXPECT_EQ(toString(row.value), row.text);
    EXPECT_EQ(parse(row.text), row.value) << row.text;
    EXPECT_EQ(isTerminal(row.value), row.terminal) << row.text;
    EXPECT_TRUE(seen.insert(row.text).second) << "two phases share " << row.text;
  }
}

TEST(PhasesTest, JobPhasesHaveTheirStableStringsAndTerminality) {
  expectTable(kJobRows, parseJobPhase);
}

TEST(PhasesTest, AttemptPhasesHaveTheirStableStringsAndTerminality) {
  expectTable(kAttemptRows, parseAttemptPhase);
}

TEST(PhasesTest, EndCausesHaveTheirStableStrings) {
  for (const auto& [cause, text] : kCauseRows) {
    EXPECT_EQ(toString(cause), text);
    EXPECT_EQ(parseEndCause(text), cause) << text;
  }
}

TEST(PhasesTest, NearMissesDoNotParse) {
  for (const char* text :
       {"", "pending", "PENDING", "Pending ", " Running", "Abandoned\n", "Submit Unknown"}) {
    EXPECT_EQ(parseJobPhase(text), std::nullopt) << text;
  }
  EXPECT_EQ(parseJobPhase("Abandoned"), std::nullopt);    // an attempt phase only
  EXPECT_EQ(parseAttemptPhase("Pending"), std::nullopt);  // a job phase only
  EXPECT_EQ(parseAttemptPhase("Retrying"), std::nullopt);
  for (const char* text : {"", "None", "USER", "external-cancel", "infra"}) {
    EXPECT_EQ(parseEndCause(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace tuneplane::phase
