// Log entries for the query log's tests.
#pragma once

#include <cstdint>
#include <string_view>

#include "moat/querylog/entry.hpp"

namespace moat::querylog::test {

inline Entry entry(std::int64_t time_us, std::string_view qname, const char* outcome = "forwarded",
                   IpAddress client = IpAddress::v4_of(192, 168, 1, 20), std::uint16_t qtype = 1) {
    Entry e;
    e.time_us = time_us;
    e.qname.assign(qname);
    e.outcome = outcome;
    e.client = client;
    e.qtype = qtype;
    return e;
}

}  // namespace moat::querylog::test
