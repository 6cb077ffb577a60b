#include "moat/engine/stats.hpp"

namespace moat::engine {

const char* to_text(Outcome outcome) noexcept {
    switch (outcome) {
        case Outcome::forwarded: return "forwarded";
        case Outcome::cached: return "cached";
        case Outcome::stale: return "stale";
        case Outcome::blocked: return "blocked";
        case Outcome::local: return "local";
        case Outcome::refused: return "refused";
        case Outcome::formerr: return "formerr";
        case Outcome::notimp: return "notimp";
        case Outcome::servfail: return "servfail";
        case Outcome::dropped: return "dropped";
        case Outcome::rate_limited: return "rate_limited";
        case Outcome::pending: return "pending";
    }
    return "unknown";
}

}  // namespace moat::engine
