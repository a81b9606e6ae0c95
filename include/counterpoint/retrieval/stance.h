// counterpoint/retrieval/stance.h: the stance a query asks for, read once for every face. A query
// such as "Find an argument attacking the claim: X" asks for passages that attack X; "Show me a
// point that backs this up: X" for passages that support it. With a sparsity scorer the stance sets
// the sign of the sparsity term: attack ranks by cos + alpha * sparsity(Es(claim) - Es(p)) (SparseCL:
// a contradiction differs from the claim in few coordinates), support by cos - alpha * sparsity.
// Es compares claims, so it reads the claim without its instruction; E and BM25 read the whole query.
#pragma once

#include <string>

namespace counterpoint::retrieval {

// kFromQuery: read the stance from the query's instruction; a query without one asks for what
// contradicts it (attack), SparseCL's contradiction search.
enum class Stance { kFromQuery, kAttack, kSupport };

// "from-query", "attack" or "support" in any case; InvalidArgument listing them (and the nearest) otherwise.
Stance parse_stance(const std::string& name);
std::string to_string(Stance stance);

// What a query asks for: its stance (kAttack or kSupport, never kFromQuery), the claim Es reads and
// the instruction that was recognised ("" when none was).
struct StanceReading {
  Stance stance = Stance::kAttack;
  std::string claim;
  std::string instruction;
  bool from_instruction = false;  // the stance was read from `instruction`
  bool given = false;             // the caller set the stance
  // "support (read from \"Show me a point that backs this up:\")", "attack (given)" or
  // "attack (no instruction: what contradicts the query)".
  std::string describe() const;
};

// The instruction is the query's opening up to its first ':' or '?' (within the first 200 bytes and
// 15 words) when that opening is a request (its first word, after an optional "please", is find,
// retrieve, show, give, list, search, get, fetch, which, what, argue, name, provide, return, look,
// cite, suggest or given), or E5's "Instruct: ...\nQuery: "; and it must name exactly one stance, by
// whole words: attack (against, attack, oppose, refute, rebut, counter, counterargument, contradict,
// disagree, disprove, undermine, challenge, objection and their forms) or support (support, favour,
// back, agree, defend, endorse, justify, confirm, corroborate, reinforce, prove and their forms, or
// "for" after evidence, argument(s), argue, case, reason(s), point(s), claim(s) or motion), with no
// negation (not, no, never, without, nor, n't). Anything else is no instruction: the whole query is
// the claim, searched for what contradicts it. `requested` other than kFromQuery is taken as told:
// that stance, and the whole query as the claim (nothing is read from it). Words are cut as BM25 cuts
// them (text::alphanumeric_words); an opening that is not valid UTF-8 is an InvalidArgument, as the
// tokenizers would refuse that query too.
StanceReading read_stance(const std::string& query, Stance requested = Stance::kFromQuery);

// The stance that signs a query's sparsity term: `read` (what read_stance found) unless it is
// kFromQuery, else `requested` unless it is kFromQuery, else attack: a query known only as vectors
// asks for what contradicts it.
Stance resolve_stance(Stance read, Stance requested);

// +1 for attack, -1 for support: the sign of the sparsity term. InvalidArgument for kFromQuery.
float sparsity_direction(Stance stance);

}  // namespace counterpoint::retrieval
