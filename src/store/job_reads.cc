#include "store/job_reads.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "store/continue_token.h"
#include "store/error_codes.h"
#include "store/record_rows.h"

namespace tuneplane::store {
namespace {

// SQL texts are built once (they are the statement cache's keys).

// What a row of jobViewSql() holds: its first column says which.
enum JobViewRow : int64_t { kJobRow = 0, kLabelRow = 1, kAttemptRow = 2 };
// Where each part's columns start in a row of jobViewSql().
constexpr int kViewJobFirst = 1;
constexpr int kViewLabelFirst = kViewJobFirst + kJobColumnCount;
constexpr int kViewAttemptFirst = kViewLabelFirst + 2;

std::string nulls(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += i == 0 ? "NULL" : ", NULL";
  return out;
}

}  // namespace

// One statement, so one snapshot without a transaction and one round trip to a database
// server: the job's row, its labels, and its attempts with their components, each part in
// columns of its own (NULL elsewhere), ordered by part, attempt and component. The parts are
// UNIONed attempts first: PostgreSQL types a UNION pair by pair from the left, and a column
// NULL in both of the first pair would become text, which the third's integers could not
// join; attempts and the job share no column, so every column of theirs keeps its type, and
// the labels' two (NULL in both) are text, as the labels are.
const std::string& jobViewSql() {
  static const std::string sql = [] {
    const int attempt_width = kAttemptColumnCount + kComponentColumnCount;
    const std::string select = "SELECT ";
    std::string out = select + std::to_string(kAttemptRow) + ", " + nulls(kJobColumnCount) + ", " +
                      nulls(2) + ", " + kAttemptColumns + ", " + kComponentColumns +
                      " FROM attempts a LEFT JOIN components c"
                      " ON c.job_id = a.job_id AND c.attempt = a.number WHERE a.job_id = ?1";
    out += " UNION ALL " + select + std::to_string(kJobRow) + ", " + kJobColumns + ", " + nulls(2) +
           ", " + nulls(attempt_width) + " FROM jobs j WHERE j.id = ?1";
    out += " UNION ALL " + select + std::to_string(kLabelRow) + ", " + nulls(kJobColumnCount) +
           ", l.key, l.value, " + nulls(attempt_width) + " FROM job_labels l WHERE l.job_id = ?1";
    // By position (a compound SELECT orders by its own columns): part, a.number, c.idx.
    out += " ORDER BY 1, " + std::to_string(kViewAttemptFirst + 2) + ", " +
           std::to_string(kViewAttemptFirst + kAttemptColumnCount + 1);
    return out;
  }();
  return sql;
}

namespace {

constexpr const char* kLabelsOfJobSql = "SELECT key, value FROM job_labels WHERE job_id = ?1";

// A job's attempt count with its last attempt's columns (one row; none without attempts).
const std::string& lastAttemptOfJobSql() {
  static const std::string sql = std::string("SELECT count(*) OVER (), ") + kAttemptColumns +
                                 " FROM attempts a WHERE a.job_id = ?1 ORDER BY a.number DESC"
                                 " LIMIT 1";
  return sql;
}

Result<AttemptSummary> readAttemptSummary(Connection& connection, const std::string& job_id) {
  auto q = connection.query(lastAttemptOfJobSql());
  if (!q) return fail(q.error());
  q->bind(1, job_id);
  auto row = q->step();
  if (!row) return fail(row.error());
  AttemptSummary summary;
  if (!*row) return summary;
  summary.count = static_cast<int>(q->integer(0));
  auto last = readAttempt(*q, 1);
  if (!last) return fail(last.error());
  summary.last = std::move(*last);
  return summary;
}

Status readLabels(Connection& connection, const std::string& job_id,
                  std::map<std::string, std::string>& labels) {
  auto q = connection.query(kLabelsOfJobSql);
  if (!q) return fail(q.error());
  q->bind(1, job_id);
  return q->forEachRow([&](Query& row) {
    labels.emplace(row.text(0), row.text(1));
    return ok();
  });
}

// Gathers rows of (attempt columns, component columns), starting at column `first`, ordered
// by job, attempt number and component index, into attempts with their components.
class AttemptRows {
 public:
  explicit AttemptRows(int first) : first_(first) {}

  // One row; the attempt before it, once finished, goes to `sink`.
  template <typename Sink>
  Status add(const Query& row, Sink&& sink) {
    const bool same = current_ && current_->job_id == row.text(first_) &&
                      current_->number == static_cast<int>(row.integer(first_ + 1));
    if (!same) {
      if (current_) sink(std::move(*current_));
      auto attempt = readAttempt(row, first_);
      if (!attempt) return fail(attempt.error());
      current_ = std::move(*attempt);
    }
    const int component_first = first_ + kAttemptColumnCount;
    if (!row.isNull(component_first)) {  // LEFT JOIN: an attempt without components
      auto component = readComponent(row, component_first);
      if (!component) return fail(component.error());
      current_->components.push_back(std::move(*component));
    }
    return ok();
  }
  // After the last row: the last attempt.
  template <typename Sink>
  void finish(Sink&& sink) {
    if (current_) sink(std::move(*current_));
    current_.reset();
  }

 private:
  const int first_;
  std::optional<AttemptRecord> current_;
};

// Every row of `q` through AttemptRows (columns from 0).
template <typename Sink>
Status readAttemptRows(Query& q, Sink&& sink) {
  AttemptRows attempts(0);
  auto rows = q.forEachRow([&](Query& row) { return attempts.add(row, sink); });
  if (!rows) return rows;
  attempts.finish(sink);
  return ok();
}

}  // namespace

// The three active-jobs queries walk jobs_active and look each job's rows up by primary key
// (SQLite's CROSS JOIN fixes that loop order; the join condition is in WHERE, since
// PostgreSQL's CROSS JOIN takes no ON), so their cost follows the number of active jobs, not
// the size of the history.
const std::string& activeLabelsSql() {
  static const std::string sql =
      std::string("SELECT l.job_id, l.key, l.value FROM jobs j CROSS JOIN job_labels l") +
      " WHERE l.job_id = j.id AND " + kActiveJobsCondition + " ORDER BY j.created_ms, j.id";
  return sql;
}

const std::string& activeAttemptsSql() {
  static const std::string sql =
      std::string("SELECT ") + kAttemptColumns + ", " + kComponentColumns +
      " FROM jobs j CROSS JOIN attempts a LEFT JOIN components c"
      " ON c.job_id = a.job_id AND c.attempt = a.number WHERE a.job_id = j.id AND " +
      kActiveJobsCondition + " ORDER BY j.created_ms, j.id, a.number, c.idx";
  return sql;
}

const std::string& activeJobsSql() {
  static const std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs j WHERE " +
                                 kActiveJobsCondition + " ORDER BY j.created_ms, j.id";
  return sql;
}

const std::string& changedJobsSql() {
  static const std::string sql = std::string("SELECT j.id, CASE WHEN ") + kActiveJobsCondition +
                                 " THEN 1 ELSE 0 END, j.change_seq FROM jobs j"
                                 " WHERE j.change_seq > ?1 ORDER BY j.change_seq";
  return sql;
}

const std::string& changedActiveJobsSql() {
  static const std::string sql = std::string("SELECT ") + kJobColumns +
                                 " FROM jobs j WHERE j.change_seq > ?1 AND " +
                                 kActiveJobsCondition + " ORDER BY j.change_seq";
  return sql;
}

const std::string& changedActiveLabelsSql() {
  static const std::string sql =
      std::string("SELECT l.job_id, l.key, l.value FROM jobs j CROSS JOIN job_labels l") +
      " WHERE l.job_id = j.id AND j.change_seq > ?1 AND " + kActiveJobsCondition +
      " ORDER BY j.change_seq";
  return sql;
}

const std::string& changedActiveAttemptsSql() {
  static const std::string sql =
      std::string("SELECT ") + kAttemptColumns + ", " + kComponentColumns +
      " FROM jobs j CROSS JOIN attempts a LEFT JOIN components c"
      " ON c.job_id = a.job_id AND c.attempt = a.number WHERE a.job_id = j.id AND"
      " j.change_seq > ?1 AND " +
      kActiveJobsCondition + " ORDER BY j.change_seq, a.number, c.idx";
  return sql;
}

std::string listJobsSql(const JobQuery& query, bool after) {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs j WHERE TRUE";
  if (query.owner) sql += " AND j.owner = :owner";
  if (query.phase) sql += " AND j.phase = :phase";
  if (query.name) sql += " AND j.name = :name";
  if (query.label) {
    sql +=
        " AND j.id IN (SELECT job_id FROM job_labels WHERE key = :label_key"
        " AND value = :label_value)";
  }
  if (after) sql += " AND (j.created_ms, j.id) < (:after_created, :after_id)";
  sql += " ORDER BY j.created_ms DESC, j.id DESC LIMIT :limit";
  return sql;
}

Result<std::optional<JobView>> readJobView(Connection& connection, const std::string& id) {
  auto q = connection.query(jobViewSql());
  if (!q) return fail(q.error());
  q->bind(1, id);
  std::optional<JobView> view;
  AttemptRows attempts(kViewAttemptFirst);
  auto keep = [&](AttemptRecord&& a) { view->attempts.push_back(std::move(a)); };
  auto rows = q->forEachRow([&](Query& row) -> Status {
    const int64_t kind = row.integer(0);
    if (kind == kJobRow) {
      auto job = readJob(row, kViewJobFirst);
      if (!job) return fail(job.error());
      view = JobView{std::move(*job), {}};
      return ok();
    }
    // The job's row comes first; without it (the id is no job's) nothing else is kept.
    if (!view) return ok();
    if (kind == kLabelRow) {
      view->job.labels.emplace(row.text(kViewLabelFirst), row.text(kViewLabelFirst + 1));
      return ok();
    }
    return attempts.add(row, keep);
  });
  if (!rows) return fail(rows.error());
  if (view) attempts.finish(keep);
  return view;
}

namespace {

// The active jobs the three queries select (jobs, labels, attempts; each binds ?1 to `since`
// when it has one), gathered into views in the order of the first.
Result<std::vector<JobView>> readViews(Connection& connection, const std::string& jobs_sql,
                                       const std::string& labels_sql,
                                       const std::string& attempts_sql,
                                       std::optional<int64_t> since) {
  std::vector<JobView> views;
  std::unordered_map<std::string, std::size_t> position;
  auto prepare = [&](const std::string& sql) {
    auto q = connection.query(sql);
    if (q && since) q->bind(1, *since);
    return q;
  };
  {
    auto q = prepare(jobs_sql);
    if (!q) return fail(q.error());
    auto jobs = q->forEachRow([&](Query& row) -> Status {
      auto job = readJob(row, 0);
      if (!job) return fail(job.error());
      position.emplace(job->id, views.size());
      views.push_back(JobView{std::move(*job), {}});
      return ok();
    });
    if (!jobs) return fail(jobs.error());
  }
  if (views.empty()) return views;
  {
    auto q = prepare(labels_sql);
    if (!q) return fail(q.error());
    auto labels = q->forEachRow([&](Query& row) {
      const auto found = position.find(row.text(0));
      if (found != position.end()) {
        views[found->second].job.labels.emplace(row.text(1), row.text(2));
      }
      return ok();
    });
    if (!labels) return fail(labels.error());
  }
  auto q = prepare(attempts_sql);
  if (!q) return fail(q.error());
  auto attempts = readAttemptRows(*q, [&](AttemptRecord&& a) {
    const auto found = position.find(a.job_id);
    if (found != position.end()) views[found->second].attempts.push_back(std::move(a));
  });
  if (!attempts) return fail(attempts.error());
  return views;
}

}  // namespace

Result<std::vector<JobView>> readActiveJobs(Connection& connection) {
  return readViews(connection, activeJobsSql(), activeLabelsSql(), activeAttemptsSql(),
                   std::nullopt);
}

Result<int64_t> readChangeSeq(Connection& connection) {
  return connection.queryInteger("SELECT coalesce(max(change_seq), 0) FROM jobs");
}

Result<ActiveJobsDelta> readActiveJobsSince(Connection& connection, int64_t since_seq) {
  ActiveJobsDelta delta;
  delta.full = false;
  delta.through_seq = since_seq;
  bool any_active = false;
  {
    auto q = connection.query(changedJobsSql());
    if (!q) return fail(q.error());
    q->bind(1, since_seq);
    auto rows = q->forEachRow([&](Query& row) {
      if (row.integer(1) == 0) {
        delta.ended.push_back(row.text(0));
      } else {
        any_active = true;
      }
      delta.through_seq = std::max(delta.through_seq, row.integer(2));
      return ok();
    });
    if (!rows) return fail(rows.error());
  }
  if (!any_active) return delta;
  auto views = readViews(connection, changedActiveJobsSql(), changedActiveLabelsSql(),
                         changedActiveAttemptsSql(), since_seq);
  if (!views) return fail(views.error());
  delta.active = std::move(*views);
  return delta;
}

Result<JobPage> readJobPage(Connection& connection, const JobQuery& query) {
  if (query.limit < kMinListLimit || query.limit > kMaxListLimit) {
    return fail(codes::kBadLimit, "limit",
                "limit must be between " + std::to_string(kMinListLimit) + " and " +
                    std::to_string(kMaxListLimit) + ", not " + std::to_string(query.limit));
  }
  std::optional<ListPosition> after;
  if (!query.continue_token.empty()) {
    auto decoded = decodeContinue(query.continue_token, query);
    if (!decoded) return fail(decoded.error());
    after = std::move(*decoded);
  }

  JobPage page;
  {
    auto q = connection.query(listJobsSql(query, after.has_value()));
    if (!q) return fail(q.error());
    if (query.owner) q->bind(":owner", *query.owner);
    if (query.phase) q->bind(":phase", toString(*query.phase));
    if (query.name) q->bind(":name", *query.name);
    if (query.label) q->bind(":label_key", query.label->first);
    if (query.label) q->bind(":label_value", query.label->second);
    if (after) q->bind(":after_created", after->created_ms).bind(":after_id", after->id);
    q->bind(":limit", int64_t{query.limit} + 1);  // one more tells whether a next page exists
    auto rows = q->forEachRow([&](Query& row) -> Status {
      if (static_cast<int>(page.jobs.size()) == query.limit) {
        // The extra row: a next page exists; it starts after the last job of this one.
        const JobRecord& last = page.jobs.back();
        page.continue_token = encodeContinue({last.created_ms, last.id}, query);
        return ok();
      }
      auto job = readJob(row, 0);
      if (!job) return fail(job.error());
      page.jobs.push_back(std::move(*job));
      return ok();
    });
    if (!rows) return fail(rows.error());
  }
  for (JobRecord& job : page.jobs) {
    if (auto labels = readLabels(connection, job.id, job.labels); !labels) {
      return fail(labels.error());
    }
    auto summary = readAttemptSummary(connection, job.id);
    if (!summary) return fail(summary.error());
    page.attempts.push_back(std::move(*summary));
  }
  return page;
}

Result<std::vector<EventRecord>> readEvents(Connection& connection, const std::string& job_id) {
  static const std::string sql =
      std::string("SELECT ") + kEventColumns + " FROM events WHERE job_id = ?1 ORDER BY seq";
  auto q = connection.query(sql);
  if (!q) return fail(q.error());
  q->bind(1, job_id);
  std::vector<EventRecord> events;
  auto rows = q->forEachRow([&](Query& row) {
    events.push_back(readEvent(row));
    return ok();
  });
  if (!rows) return fail(rows.error());
  return events;
}

Result<std::map<JobPhase, int64_t>> readPhaseCounts(Connection& connection) {
  auto q = connection.query("SELECT phase, count(*) FROM jobs GROUP BY phase");
  if (!q) return fail(q.error());
  std::map<JobPhase, int64_t> counts;
  auto rows = q->forEachRow([&](Query& row) -> Status {
    const std::string text = row.text(0);
    const auto phase = parseJobPhase(text);
    if (!phase) {
      return fail(codes::kCorrupt, "jobs.phase",
                  "stored phase \"" + text + "\" is not one this TunePlane knows");
    }
    counts[*phase] = row.integer(1);
    return ok();
  });
  if (!rows) return fail(rows.error());
  return counts;
}

Result<std::map<std::pair<AttemptPhase, EndCause>, int64_t>> readEndedAttemptCounts(
    Connection& connection) {
  auto q = connection.query(
      "SELECT phase, cause, count(*) FROM attempts "
      "WHERE phase IN ('Succeeded', 'Failed', 'Cancelled', 'Abandoned') GROUP BY phase, cause");
  if (!q) return fail(q.error());
  std::map<std::pair<AttemptPhase, EndCause>, int64_t> counts;
  auto rows = q->forEachRow([&](Query& row) -> Status {
    const std::string phase_text = row.text(0);
    const std::string cause_text = row.text(1);
    const auto phase = parseAttemptPhase(phase_text);
    if (!phase) {
      return fail(codes::kCorrupt, "attempts.phase",
                  "stored phase \"" + phase_text + "\" is not one this TunePlane knows");
    }
    const auto cause = parseEndCause(cause_text);
    if (!cause) {
      return fail(codes::kCorrupt, "attempts.cause",
                  "stored cause \"" + cause_text + "\" is not one this TunePlane knows");
    }
    counts[{*phase, *cause}] = row.integer(2);
    return ok();
  });
  if (!rows) return fail(rows.error());
  return counts;
}

}  // namespace tuneplane::store
