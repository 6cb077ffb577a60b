// Giving up privilege once the sockets are bound. Port 53 needs CAP_NET_BIND_SERVICE (or root)
// only for bind(); nothing after it does, so the daemon keeps none:
//  - started by systemd as its own user with the ambient capability: every capability is
//    dropped;
//  - started as root (by hand, an init script, a container): it switches to the configured user
//    ([server] user), which also ends every capability.
// Either way no_new_privs is set, so nothing it could exec later gains any.
#pragma once

#include <linux/capability.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace moat::app {

struct PrivilegeDrop {
    /// What happened, for the log ("switched to user dnsmoat (uid 104)").
    std::string summary;
    bool as_root = false;  ///< still root: the summary is a warning
    /// Directories the daemon writes that the new user cannot write: each with a hint.
    std::vector<std::string> warnings;
};

/// The process's capability sets (permitted, effective, inheritable; two words each).
using CapabilityData = std::array<__user_cap_data_struct, 2>;
[[nodiscard]] std::optional<CapabilityData> capabilities();

/// `user`: whom root becomes ("" stays root). `writable`: directories the daemon writes after
/// the drop (the lists' state, the query log's, the control socket's); as root, those missing
/// are created for the user. The error says why a switch failed (the daemon must not go on).
tl::expected<PrivilegeDrop, std::string> drop_privileges(
    const std::string& user, const std::vector<std::filesystem::path>& writable);

/// For the commands that read the daemon's files (`dnsmoat log`, `dnsmoat stats`): run as root,
/// become the owner of `file` first, so what SQLite creates beside it (the -wal and -shm files
/// of a log the service is not running on) stays the service's. Does nothing when not root or
/// when the file is missing or root's; false when the switch failed.
bool become_owner_of(const std::filesystem::path& file);

}  // namespace moat::app
