// The query log's tables and indexes (database.hpp explains the layout), and the version stamp
// that lets a later dnsmoat migrate the file.
#pragma once

namespace moat::querylog::schema {

/// PRAGMA user_version of the layout below. A file with a higher number was written by a newer
/// dnsmoat and is not touched.
inline constexpr int kVersion = 1;

/// Per connection: WAL (readers never block the writer), synchronous=NORMAL (a crash of the
/// process loses nothing committed; a power cut at most the last transactions, never the file),
/// a bounded WAL, and a small page cache (the daemon's memory budget is a few MiB).
inline constexpr const char* kWriterPragmas =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA journal_size_limit=8388608;"
    "PRAGMA cache_size=-2048;"
    "PRAGMA analysis_limit=1000;";

inline constexpr const char* kReaderPragmas = "PRAGMA cache_size=-8192;";

inline constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS domains(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS clients(id INTEGER PRIMARY KEY, address TEXT NOT NULL UNIQUE,"
    " name TEXT);"
    "CREATE TABLE IF NOT EXISTS labels(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);"
    "CREATE TABLE IF NOT EXISTS queries("
    " id INTEGER PRIMARY KEY,"      // arrival time in us << 10 (unique, increasing)
    " time INTEGER NOT NULL,"       // arrival time, us since the Unix epoch
    " client INTEGER NOT NULL,"     // clients.id
    " domain INTEGER NOT NULL,"     // domains.id
    " qtype INTEGER NOT NULL,"      // RR type number
    " outcome INTEGER NOT NULL,"    // labels.id: forwarded, cached, blocked, ...
    " rcode INTEGER NOT NULL,"      // of the answer
    " transport INTEGER NOT NULL,"  // labels.id: udp, tcp
    " upstream INTEGER,"            // labels.id: ADDR:PORT that answered
    " latency_us INTEGER NOT NULL,"
    " ede INTEGER,"       // Extended DNS Error code of the answer
    " list INTEGER,"      // labels.id: the list of the rule behind the outcome
    " line INTEGER,"      // the rule's line in that list
    " pattern INTEGER);"  // labels.id: the rule's regex
    "CREATE INDEX IF NOT EXISTS queries_domain ON queries(domain);"
    "CREATE INDEX IF NOT EXISTS queries_client ON queries(client);"
    "CREATE INDEX IF NOT EXISTS queries_outcome ON queries(outcome);"
    "CREATE INDEX IF NOT EXISTS queries_qtype ON queries(qtype);";

}  // namespace moat::querylog::schema
