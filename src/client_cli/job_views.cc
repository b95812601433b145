#include "client_cli/job_views.h"

#include <fmt/format.h>

#include "client_cli/table.h"
#include "client_cli/time_text.h"

namespace tuneplane::cli {
namespace {

using client::AttemptView;
using client::ComponentView;
using client::EventView;
using client::JobView;

std::string orDash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::string reasonCell(const std::string& reason, const ViewOptions& view) {
  return view.terminal ? ellipsize(orDash(reason), kTableReasonChars) : orDash(reason);
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

std::string exitText(const ComponentView& c) {
  if (!c.exit_code && !c.signal) return "-";
  std::string out = c.exit_code ? std::to_string(*c.exit_code) : "-";
  if (c.signal && *c.signal != 0) out += fmt::format(" (signal {})", *c.signal);
  return out;
}

// "5m 3s ago (2026-…Z)" on a terminal, the text alone for a pipe, "-" when unset.
std::string longTime(const std::optional<std::string>& time, const ViewOptions& view) {
  if (!time || time->empty()) return "-";
  if (!view.terminal) return *time;
  const std::string age = showTime(time, view.now_ms, true);
  return age == *time ? age : fmt::format("{} ({})", age, *time);
}

// "Key:" padded so values line up, as kubectl describe does.
void field(std::string& out, const std::string& indent, const std::string& key,
           const std::string& value) {
  out += fmt::format("{}{:<15}{}\n", indent, key + ":", value);
}

void describeAttempt(std::string& out, const AttemptView& a, const ViewOptions& view) {
  out += fmt::format("\nAttempt {}:\n", a.number);
  const std::string in = "  ";
  field(out, in, "Phase", orDash(a.phase));
  field(out, in, "Reason", orDash(a.reason));
  field(out, in, "Cause", orDash(a.cause));
  field(out, in, "Slurm job", a.job_id ? std::to_string(*a.job_id) : "-");
  field(out, in, "Submit token", orDash(a.submit_token));
  field(out, in, "Staging dir", orDash(a.staging_dir));
  field(out, in, "Created", longTime(a.created, view));
  field(out, in, "Submitted", longTime(a.submitted, view));
  field(out, in, "Ended", longTime(a.ended, view));
  if (a.resume_from_step) {
    field(out, in, "Started from",
          *a.resume_from_step == 0
              ? std::string("step 0 (from the start)")
              : fmt::format("step {} (the job's last checkpoint)", *a.resume_from_step));
  }
  if (!a.terminal()) {
    // In Slurm's grace time: warned, and ended PREEMPTED by the component's end_time.
    for (const ComponentView& c : a.components) {
      if (!c.preempt_time || c.state.empty() || c.state.front() != "RUNNING") continue;
      field(out, in, "Preemption", "being preempted since " + longTime(c.preempt_time, view));
      field(out, in, "Grace ends", longTime(c.end_time, view) + " (Slurm ends it by then)");
      break;
    }
  }
  if (a.lookups > 0) field(out, in, "Lookups", std::to_string(a.lookups));
  if (a.abandoned_by) {
    field(out, in, "Abandoned",
          fmt::format("by {}: {}", *a.abandoned_by, a.abandon_reason.value_or("")));
  }
  if (a.components.empty()) {
    field(out, in, "Components", "<none yet>");
    return;
  }
  out += in + "Components:\n";
  Table table(
      {"INDEX", "POOL", "JOB ID", "SLUID", "STATE", "REASON", "EXIT", "NODES", "STARTED", "ENDED"});
  for (const ComponentView& c : a.components) {
    table.add({std::to_string(c.index), orDash(c.pool), c.job_id ? std::to_string(*c.job_id) : "-",
               orDash(c.sluid), orDash(joined(c.state, ",")), orDash(c.reason), exitText(c),
               orDash(c.nodes),
               // A pending component's start_time is Slurm's estimate (the Waiting block).
               !c.state.empty() && c.state.front() == "PENDING"
                   ? "-"
                   : showTime(c.start_time, view.now_ms, view.terminal),
               showTime(c.end_time, view.now_ms, view.terminal)});
  }
  out += table.render(true, in + "  ");
}

// "in 12m" on a terminal, the RFC 3339 text for a pipe; "" when unset.
std::string estimateText(const std::optional<std::string>& time, const ViewOptions& view) {
  if (!time || time->empty()) return "";
  return view.terminal ? showTime(time, view.now_ms, true) : *time;
}

std::string placeText(const client::ComponentWaitingView& c) {
  if (!c.position || !c.pending_in_partition) return "";
  return fmt::format("#{} of {} in {}", *c.position, *c.pending_in_partition,
                     c.partition.empty() ? "its partition" : c.partition);
}

void describeWaiting(std::string& out, const client::WaitingView& w, const ViewOptions& view) {
  field(out, "", "Waiting",
        fmt::format("attempt {} in Slurm's queue ({})", w.attempt,
                    w.as_of ? "the queue as read " + longTime(w.as_of, view)
                            : "as the control loop last saw it; the queue was not read"));
  for (const client::ComponentWaitingView& c : w.components) {
    const std::string in = "    ";
    out += fmt::format("  {}:\n", c.pool.empty() ? "Job" : "Pool " + c.pool);
    const std::string reason = c.reason.empty() ? "-" : c.reason;
    field(out, in, "Reason",
          c.reason_text.empty() ? reason : fmt::format("{} ({})", reason, c.reason_text));
    const std::string place = placeText(c);
    field(out, in, "Queue place",
          place.empty() ? "-" : place + " (pending jobs ahead of it, by Slurm's priority)");
    field(out, in, "Start",
          c.estimated_start ? longTime(c.estimated_start, view) + ", Slurm's estimate"
                            : "Slurm has no estimate yet");
  }
}

Table eventRows(const std::vector<EventView>& events, const ViewOptions& view) {
  Table table({"SEQ", "TIME", "ATTEMPT", "FROM", "TO", "ACTOR", "REASON"});
  for (const EventView& e : events) {
    table.add({std::to_string(e.seq), showTime(e.time, view.now_ms, view.terminal),
               e.attempt > 0 ? std::to_string(e.attempt) : "-", orDash(e.from), orDash(e.to),
               orDash(e.actor), reasonCell(e.reason, view)});
  }
  return table;
}

}  // namespace

std::string waitingLine(const JobView& job, const ViewOptions& view) {
  if (!job.waiting || job.waiting->components.empty()) return "";
  // The component furthest from starting: the last place, else the first.
  const client::ComponentWaitingView* shown = &job.waiting->components.front();
  for (const auto& c : job.waiting->components) {
    if (c.position.value_or(0) > shown->position.value_or(0)) shown = &c;
  }
  std::vector<std::string> parts;
  if (const std::string place = placeText(*shown); !place.empty()) parts.push_back(place);
  const std::string when = estimateText(shown->estimated_start, view);
  parts.push_back(when.empty() ? "no start estimate yet" : "est. start " + when);
  const std::string reason = shown->reason.empty() ? "queued" : shown->reason;
  return fmt::format("{}: {}", reason, joined(parts, ", "));
}

std::string jobsTable(const std::vector<JobView>& jobs, const ViewOptions& view) {
  if (jobs.empty()) return "No jobs found.\n";
  Table table({"ID", "NAME", "OWNER", "PHASE", "ATTEMPTS", "CREATED", "REASON"});
  for (const JobView& job : jobs) {
    const std::string waiting = waitingLine(job, view);
    table.add({job.id, orDash(job.name), orDash(job.owner), job.phase,
               std::to_string(job.attempt_count), showTime(job.created, view.now_ms, view.terminal),
               reasonCell(waiting.empty() ? job.reason : waiting, view)});
  }
  return table.render(view.terminal);
}

std::string eventsTable(const std::vector<EventView>& events, const ViewOptions& view,
                        const std::string& indent) {
  if (events.empty()) return indent + "No events.\n";
  return eventRows(events, view).render(view.terminal, indent);
}

std::string describeJob(const JobView& job, const std::vector<EventView>& events,
                        const ViewOptions& view) {
  std::string out;
  field(out, "", "ID", job.id);
  field(out, "", "Name", orDash(job.name));
  field(out, "", "Owner", orDash(job.owner));
  std::vector<std::string> labels;
  for (const auto& [key, value] : job.labels) labels.push_back(key + "=" + value);
  field(out, "", "Labels", labels.empty() ? "<none>" : joined(labels, ","));
  field(out, "", "Phase", job.phase);
  field(out, "", "Reason", orDash(job.reason));
  if (job.slurm_account || job.qos) {
    field(out, "", "Charged to",
          "account " + job.slurm_account.value_or("-") + ", QOS " + job.qos.value_or("-"));
  }
  if (job.workdir) {
    field(out, "", "Workdir",
          *job.workdir + " (read-only at " + job.workdir_path.value_or("?") + ")");
  }
  field(out, "", "Created", longTime(job.created, view));
  field(out, "", "Updated", longTime(job.updated, view));
  if (job.cancel_requested) {
    field(out, "", "Cancel",
          "requested" + (job.cancel_requested_by ? " by " + *job.cancel_requested_by : ""));
  }
  if (job.next_attempt_at) field(out, "", "Next attempt", longTime(job.next_attempt_at, view));
  if (job.waiting) describeWaiting(out, *job.waiting, view);
  field(out, "", "Attempts",
        job.preemptions > 0
            ? fmt::format("{} ({} preempted: not counted against retry.max_attempts)",
                          job.attempts.size(), job.preemptions)
            : std::to_string(job.attempts.size()));
  for (const AttemptView& a : job.attempts) describeAttempt(out, a, view);

  std::vector<EventView> recent = events;
  if (recent.size() > kDescribeEvents) {
    recent.erase(recent.begin(), recent.end() - static_cast<std::ptrdiff_t>(kDescribeEvents));
    out += fmt::format("\nEvents (the last {} of {}; all of them: tuneplane events {}):\n",
                       kDescribeEvents, events.size(), job.id);
  } else {
    out += "\nEvents:\n";
  }
  // Aligned even when piped (see the header); times follow the terminal rule.
  out += recent.empty() ? "  No events.\n" : eventRows(recent, view).render(true, "  ");
  return out;
}

}  // namespace tuneplane::cli
