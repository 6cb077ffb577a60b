// A search of the query log and the page of rows it returns, newest first. Paging is by cursor:
// a page's `next` is passed as the following search's `before`, so deep pages cost the same as
// the first (no OFFSET).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moat::querylog {

enum class DomainMatch : std::uint8_t {
    substring,  ///< the name contains the text
    suffix,     ///< the name is the text or a subdomain of it
    exact,
};

struct Search {
    std::optional<std::int64_t> from_us;  ///< inclusive, microseconds since the Unix epoch
    std::optional<std::int64_t> to_us;    ///< exclusive
    std::string client;                   ///< an address as stored ("192.0.2.7", "::1")
    std::string domain;                   ///< lower case; empty: any
    DomainMatch match = DomainMatch::substring;
    std::string outcome;  ///< "blocked", "cached", ...; empty: any
    std::optional<std::uint16_t> qtype;
    std::size_t limit = 100;             ///< rows per page, 1..1000
    std::optional<std::int64_t> before;  ///< a previous page's `next`
};

struct Row {
    std::int64_t id = 0;  ///< increasing with arrival; the paging key
    std::int64_t time_us = 0;
    std::string client;
    std::string domain;
    std::uint16_t qtype = 0;
    std::string outcome;
    std::uint8_t rcode = 0;
    std::string transport;
    std::string upstream;  ///< "ADDR:PORT", or empty
    std::uint32_t latency_us = 0;
    std::optional<std::uint16_t> ede;
    std::string list;  ///< the rule's list, or empty
    std::uint32_t line = 0;
    std::string pattern;
};

struct Page {
    std::vector<Row> rows;
    std::optional<std::int64_t> next;  ///< set when more rows may follow
};

}  // namespace moat::querylog
