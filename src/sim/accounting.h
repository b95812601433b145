// Slurm's associations as the simulator enforces them when its cluster file has an
// `accounting:` section (as AccountingStorageEnforce=associations,limits,qos does; transcript
// 20_associations): which accounts each user may charge, which QoS they may use, and the
// account and QoS a job gets when it names none. Without the section nothing is enforced, as
// on a cluster without slurmdbd. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tuneplane::sim {

// One user's associations: one per account in `accounts`.
struct AccountingUser {
  std::string name;
  std::vector<std::string> accounts;       // the accounts the user may charge
  std::string default_account;             // "" → the first of `accounts`
  std::vector<std::string> qos{"normal"};  // the QoS the user may ask for
  std::string default_qos = "normal";
};

struct AccountingConfig {
  std::vector<std::string> accounts;
  std::vector<std::string> qos{"normal"};
  std::vector<AccountingUser> users;
};

// What a job is charged to: its record's `account`, `qos` and `association_id`, and whether
// each was the default (the USING_DEFAULT_ACCOUNT / USING_DEFAULT_QOS flags).
struct Charge {
  std::string account;
  std::string qos;
  uint32_t association_id = 0;
  bool default_account = true;
  bool default_qos = true;
};

// slurmctld's association check of a job `user` submits asking `account` and `qos` ("" = not
// named). Sets `*charge` and returns 0, or returns Slurm's error number: 2045 (an account
// that does not exist, or that the user has no association with; also a user with none at
// all), 2066 (a QoS that does not exist or the user may not use).
// Association ids are numbered from 1 over the users' accounts in the file's order.
int chargeJob(const AccountingConfig& accounting, const std::string& user,
              const std::string& account, const std::string& qos, Charge* charge);

// Without accounting: the account as named, no QoS, no association.
Charge unenforcedCharge(const std::string& account, const std::string& qos);

inline constexpr int kErrInvalidAccount = 2045;
inline constexpr int kErrInvalidQos = 2066;

}  // namespace tuneplane::sim
