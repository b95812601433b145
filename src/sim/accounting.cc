#include "sim/accounting.h"

#include <algorithm>

namespace tuneplane::sim {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

int chargeJob(const AccountingConfig& accounting, const std::string& user,
              const std::string& account, const std::string& qos, Charge* charge) {
  uint32_t association_id = 0;
  const AccountingUser* who = nullptr;
  for (const AccountingUser& u : accounting.users) {
    if (u.name == user) {
      who = &u;
      break;
    }
    association_id += static_cast<uint32_t>(u.accounts.size());
  }
  if (!who || who->accounts.empty()) return kErrInvalidAccount;
  Charge out;
  out.default_account = account.empty();
  out.account = account.empty()
                    ? (who->default_account.empty() ? who->accounts.front() : who->default_account)
                    : account;
  const auto at = std::find(who->accounts.begin(), who->accounts.end(), out.account);
  if (at == who->accounts.end() || !listed(accounting.accounts, out.account))
    return kErrInvalidAccount;
  out.association_id = association_id + static_cast<uint32_t>(at - who->accounts.begin()) + 1;
  out.default_qos = qos.empty();
  out.qos = qos.empty() ? who->default_qos : qos;
  if (!listed(accounting.qos, out.qos) || !listed(who->qos, out.qos)) return kErrInvalidQos;
  *charge = std::move(out);
  return 0;
}

Charge unenforcedCharge(const std::string& account, const std::string& qos) {
  Charge out;
  out.account = account;
  out.default_account = account.empty();
  out.default_qos = qos.empty();
  return out;
}

}  // namespace tuneplane::sim
