#include "privileges.hpp"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <optional>
#include <system_error>

namespace moat::app {
namespace {

std::string errno_text() { return std::system_category().message(errno); }

struct Account {
    uid_t uid = 0;
    gid_t gid = 0;
};

std::optional<Account> find_user(const std::string& name) {
    passwd entry{};
    passwd* found = nullptr;
    std::array<char, 4096> buffer{};
    if (::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr) {
        return std::nullopt;
    }
    return Account{found->pw_uid, found->pw_gid};
}

bool holds_any(const CapabilityData& data) {
    return data[0].permitted != 0 || data[1].permitted != 0 || data[0].effective != 0 ||
           data[1].effective != 0 || data[0].inheritable != 0 || data[1].inheritable != 0;
}

/// Clears the ambient, permitted, effective and inheritable sets (the bounding set needs
/// CAP_SETPCAP to shrink, which systemd's unit already limits).
tl::expected<void, std::string> clear_capabilities() {
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        return tl::unexpected(std::string("cannot clear ambient capabilities: ") + errno_text());
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    CapabilityData none{};
    if (::syscall(SYS_capset, &header, none.data()) != 0) {
        return tl::unexpected(std::string("cannot drop capabilities: ") + errno_text());
    }
    return {};
}

/// Creates the missing part of `dir`, owned by `account` (mode 0750); directories that exist
/// are left as they are.
void create_for(const std::filesystem::path& dir, const Account& account) {
    std::filesystem::path built;
    for (const auto& part : dir) {
        built /= part;
        std::error_code ec;
        if (std::filesystem::exists(built, ec)) {
            continue;
        }
        if (::mkdir(built.c_str(), 0750) != 0 ||
            ::chown(built.c_str(), account.uid, account.gid) != 0) {
            return;  // reported by the writability check after the switch
        }
    }
}

tl::expected<void, std::string> become(const std::string& user, const Account& account) {
    if (::setgroups(1, &account.gid) != 0 ||
        ::setresgid(account.gid, account.gid, account.gid) != 0 ||
        ::setresuid(account.uid, account.uid, account.uid) != 0) {
        return tl::unexpected("cannot switch to user " + user + ": " + errno_text());
    }
    if (account.uid != 0 && ::setuid(0) == 0) {
        return tl::unexpected("switched to user " + user + " but could become root again");
    }
    return {};
}

std::vector<std::string> unwritable(const std::vector<std::filesystem::path>& dirs,
                                    const std::string& user) {
    std::vector<std::string> out;
    for (const auto& dir : dirs) {
        if (dir.empty() || ::access(dir.c_str(), W_OK) == 0) {
            continue;
        }
        std::string warning = dir.string() + " is not writable by user " + user;
        warning += " (" + errno_text() + "); fix with: chown " + user + " " + dir.string();
        out.push_back(std::move(warning));
    }
    return out;
}

}  // namespace

std::optional<CapabilityData> capabilities() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    CapabilityData data{};
    if (::syscall(SYS_capget, &header, data.data()) != 0) {
        return std::nullopt;
    }
    return data;
}

bool become_owner_of(const std::filesystem::path& file) {
    struct stat owner {};
    if (::geteuid() != 0 || ::stat(file.c_str(), &owner) != 0 || owner.st_uid == 0) {
        return true;
    }
    return become("uid " + std::to_string(owner.st_uid), {owner.st_uid, owner.st_gid}).has_value();
}

tl::expected<PrivilegeDrop, std::string> drop_privileges(
    const std::string& user, const std::vector<std::filesystem::path>& writable) {
    PrivilegeDrop result;
    if (::geteuid() == 0) {
        if (user.empty() || user == "root") {
            result.summary = "running as root ([server] user is \"" + user +
                             "\"): a flaw in dnsmoat would hold the whole machine";
            result.as_root = true;
            return result;
        }
        const auto account = find_user(user);
        if (!account) {
            result.summary = "running as root: there is no user " + user +
                             " to switch to (create it: adduser --system --group " + user +
                             "; or name another one in [server] user)";
            result.as_root = true;
            return result;
        }
        for (const auto& dir : writable) {
            if (!dir.empty()) {
                create_for(dir, *account);
            }
        }
        if (auto switched = become(user, *account); !switched) {
            return tl::unexpected(switched.error());
        }
        result.summary = "switched to user " + user + " (uid " + std::to_string(account->uid) +
                         "), no capabilities";
        result.warnings = unwritable(writable, user);
    } else if (const auto held = capabilities(); held && holds_any(*held)) {
        if (auto cleared = clear_capabilities(); !cleared) {
            // A system call filter without capset (dnsmoat.service has one; the daemon normally
            // sheds the capability by running itself again first): what is held stays.
            result.warnings.push_back(cleared.error() + "; keeping them");
        } else {
            result.summary = "capabilities dropped (port 53 is bound)";
        }
    }
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    return result;
}

}  // namespace moat::app
