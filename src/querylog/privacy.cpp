#include <algorithm>

#include "moat/querylog/options.hpp"

namespace moat::querylog {

bool in_domain(std::string_view qname, std::string_view domain) noexcept {
    if (qname.size() < domain.size() || !qname.ends_with(domain)) {
        return false;
    }
    return qname.size() == domain.size() || qname[qname.size() - domain.size() - 1] == '.';
}

bool apply_privacy(const LogOptions& options, Entry& entry) noexcept {
    if (options.privacy == Privacy::anonymous) {
        return false;
    }
    const std::string_view qname = entry.qname.view();
    if (std::any_of(options.exclude_domains.begin(), options.exclude_domains.end(),
                    [&](const std::string& d) { return in_domain(qname, d); })) {
        return false;
    }
    if (std::any_of(options.exclude_clients.begin(), options.exclude_clients.end(),
                    [&](const Cidr& c) { return c.contains(entry.client); })) {
        return false;
    }
    if (options.privacy == Privacy::hide_domains) {
        // The rule's line or pattern would tell the name again; the list's name does not.
        entry.qname.assign("hidden");
        entry.line = 0;
        entry.pattern.assign("");
    } else if (options.privacy == Privacy::hide_clients) {
        entry.client = IpAddress{};  // stored as 0.0.0.0: one client for everyone
    }
    return true;
}

}  // namespace moat::querylog
