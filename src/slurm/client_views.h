// ClientViews: the per-user views a SlurmClient decorator hands out from as(user), made once
// per user and kept for the decorator's life (so a reference taken stays valid). A decorator
// wraps the inner client's view for the user in a decorator of its own kind:
//
//   SlurmClient& as(const std::string& user) override {
//     return views_.of(*this, inner_, user, [&](SlurmClient& inner_view) {
//       return std::make_unique<Metered>(inner_view, ...);
//     });
//   }
//
// Thread-safety: of() from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "slurm/slurm_client.h"

namespace tuneplane::slurm {

class ClientViews {
 public:
  using Wrap = std::function<std::unique_ptr<SlurmClient>(SlurmClient& inner_view)>;

  // `self` for "" or when the inner client has one identity only; else the kept view.
  SlurmClient& of(SlurmClient& self, SlurmClient& inner, const std::string& user,
                  const Wrap& wrap) {
    if (user.empty()) return self;
    SlurmClient& inner_view = inner.as(user);
    if (&inner_view == &inner) return self;
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = views_[user];
    if (!slot) slot = wrap(inner_view);
    return *slot;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<SlurmClient>> views_;
};

}  // namespace tuneplane::slurm
