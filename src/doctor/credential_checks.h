// Doctor's judgement of the site's credential files, one check each (`credential/<field>`),
// pure over CredentialFacts. Every job runs as slurm.user and can read what that user can
// read on the nodes; a JWT signing key it can read lets it mint a token for any Slurm user,
// SlurmUser included. So a credential file fails when:
//   - it lies under staging_root (every job reads and writes the attempts there);
//   - it lies under a mounts[].source (bound into every job's container);
//   - it is on the staging root's filesystem, unless that filesystem is local to this host;
//   - it is on a network or cluster filesystem (statfs f_type: NFS, Lustre, GPFS, …), which
//     other hosts — the compute nodes among them — may mount;
//   - its group or others have any access (mode & 077), or it belongs to another user than
//     the one serve runs as;
//   - this host is itself a compute node and the file belongs to the user the jobs run as: a
//     job placed here runs as the file's owner (every kind but the jobs' own token, which
//     gives such a job nothing it does not have).
// Each finding comes with its fix. With slurm.accept_exposed_credentials the findings are
// warnings (the operator accepted them) and serve starts. A file that does not exist is
// skipped here: the token check (or serve's own load) reports it.
#pragma once

#include <vector>

#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

// One finding: what is wrong and what fixes it.
struct Exposure {
  std::string what;
  std::string fix;
};

// Every exposure of the file (empty: none).
std::vector<Exposure> credentialExposures(const CredentialFacts& facts);

CheckResult checkCredential(const CredentialFacts& facts);

}  // namespace tuneplane::doctor
