// The user guide's status table (docs/users.md, "Slurm state → phase") is the code's: every row is
// checked against mapComponent, and every row (with a cancel requested or not) is driven through
// the real tick() against FakeSlurmClient — a single-pool job and a het job whose components all
// report the row's state. Every base state of slurm/job_state.h appears in the table.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "control/status_mapping.h"
#include "reconciler_fake_fixture.h"
#include "slurm/job_state.h"
#include "support/test_paths.h"

namespace tuneplane::control::testing {
namespace {

struct TableRow {
  std::vector<std::string> state;
  std::string reason;
  bool cancel_requested = false;
  phase::AttemptPhase phase;
  phase::AttemptPhase outcome;
  phase::EndCause cause;
  std::string line;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const auto b = cell.find_first_not_of(' ');
    const auto e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::vector<TableRow> guideTable() {
  std::ifstream in(test::sourceDir() / "docs" / "users.md");
  EXPECT_TRUE(in) << "docs/users.md unreadable";
  std::vector<TableRow> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("status-table:begin") != std::string::npos) inside = true;
    if (line.find("status-table:end") != std::string::npos) break;
    if (!inside || !line.starts_with("| ") || line.starts_with("| job_state")) continue;
    const auto c = cells(line);
    if (c.size() != 6) {
      ADD_FAILURE() << "not a row of 6 cells: " << line;
      continue;
    }
    TableRow row;
    std::stringstream names(c[0]);
    std::string name;
    while (std::getline(names, name, ',')) row.state.push_back(name);
    row.reason = c[1];
    row.cancel_requested = c[2] == "yes";
    auto phase = phase::parseAttemptPhase(c[3]);
    auto outcome = phase::parseAttemptPhase(c[4]);
    auto cause = phase::parseEndCause(c[5]);
    if (!phase || !outcome || !cause) {
      ADD_FAILURE() << "unknown phase or cause in: " << line;
      continue;
    }
    row.phase = *phase;
    row.outcome = *outcome;
    row.cause = *cause;
    row.line = line;
    rows.push_back(row);
  }
  EXPECT_GT(rows.size(), 20u) << "docs/users.md's status table not found";
  return rows;
}

TEST(StatusTable, EveryGuideRowIsWhatMapComponentSays) {
  for (const TableRow& row : guideTable()) {
    SCOPED_TRACE(row.line);
    const ComponentVerdict v =
        mapComponent(row.state, row.reason, std::nullopt, std::nullopt, row.cancel_requested);
    EXPECT_EQ(v.phase, row.phase) << v.reason;
    EXPECT_EQ(v.outcome, row.outcome) << v.reason;
    EXPECT_EQ(v.cause, row.cause) << v.reason;
  }
}

TEST(StatusTable, NamesEveryBaseStateOfSlurm) {
  std::set<std::string> named;
  for (const TableRow& row : guideTable()) named.insert(row.state.front());
  for (slurm::JobBaseState base : slurm::kAllBaseStates) {
    EXPECT_TRUE(named.count(std::string(slurm::jobStateName(base))))
        << slurm::jobStateName(base) << " is missing from docs/users.md's status table";
  }
}

class StatusTableTick : public FakeReconcilerTest {
 protected:
  void drive(const TableRow& row, const std::string& spec_text) {
    const std::string id = queued(spec_text);
    if (row.cancel_requested) {
      // The user asks; the reconciler's DELETE leaves Slurm's records in the row's state (a
      // job may go on RUNNING for a while after Slurm heard a DELETE, or end COMPLETING).
      ASSERT_TRUE(service_->cancel(id, "ann"));
      slurm_.setCancelState(row.state);
    }
    const std::size_t deletes_before = slurm_.args(FakeSlurmClient::Op::kCancel).size();
    // The batch script's log, as a job that ran leaves it (a missing one turns a user
    // failure into "could not write its log").
    writeAttemptLog(id, attempt(view(id)).components.front().pool + ".out", "ran\n");
    for (auto* r : slurm_.components(sluid(id))) {
      r->job_state = row.state;
      r->state_reason = row.reason;
    }
    next();
    const auto v = view(id);
    // With a cancel requested, the DELETE is out and only the end moves the attempt
    // (decisions.h, applyVerdict): whatever the row says short of an end (queued, running,
    // an epilog holding resources) is the attempt's Cancelling.
    const phase::AttemptPhase expected = row.cancel_requested && !phase::isTerminal(row.phase) &&
                                                 row.phase != phase::AttemptPhase::kUnknown
                                             ? phase::AttemptPhase::kCancelling
                                             : row.phase;
    EXPECT_EQ(attempt(v).phase, expected) << attempt(v).reason;
    if (row.cancel_requested) {
      EXPECT_GT(slurm_.args(FakeSlurmClient::Op::kCancel).size(), deletes_before)
          << "no DELETE was sent";
    }
    if (phase::isTerminal(row.phase)) {
      EXPECT_EQ(attempt(v).cause, row.cause) << attempt(v).reason;
    }
    const bool requeued = std::any_of(row.state.begin(), row.state.end(), [](const auto& n) {
      return n.starts_with("REQUEUE") || n == "SPECIAL_EXIT";
    });
    if (requeued && attempt(v).phase == phase::AttemptPhase::kFailed) {
      // The requeued job may not run again: every component Slurm still has is ended.
      for (auto* r : slurm_.components(sluid(id))) {
        EXPECT_TRUE(r->job_state.front() != "PENDING" && r->job_state.front() != "RUNNING")
            << r->sluid << " still " << r->job_state.front();
      }
    }
  }
};

TEST_F(StatusTableTick, EveryRowWithoutACancelThroughTickSingleAndHet) {
  for (const TableRow& row : guideTable()) {
    if (row.cancel_requested) continue;
    SCOPED_TRACE(row.line);
    drive(row, cpuSpec());
    drive(row, hetJobSpec());
  }
}

TEST_F(StatusTableTick, EveryRowWithACancelThroughTickSingleAndHet) {
  int rows = 0;
  for (const TableRow& row : guideTable()) {
    if (!row.cancel_requested) continue;
    ++rows;
    SCOPED_TRACE(row.line);
    drive(row, cpuSpec());
    drive(row, hetJobSpec());
  }
  EXPECT_GE(rows, 4) << "docs/users.md's status table lost its rows with a cancel requested";
}

}  // namespace
}  // namespace tuneplane::control::testing
