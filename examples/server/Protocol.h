//===- Protocol.h - JSON requests and answers -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Validation happens on the HTTP thread, before a request is queued: a bad
// request is answered 4xx here and never reaches the ranks.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_PROTOCOL_H
#define DTENSOR_EXAMPLES_SERVER_PROTOCOL_H

#include "Job.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::server {

/// What a request may ask of this model.
struct Limits {
  int64_t seqLen = 0;
  int64_t vocab = 0;
  bool hasLogits = false;
};

/// A validated request.
struct Request {
  JobKind kind = JobKind::NextToken;
  std::vector<int64_t> tokens;
  int64_t maxNewTokens = 1;
  bool logits = false;
};

/// A request the server refuses: an HTTP status (4xx) and why.
struct RequestError {
  int status = 0;
  std::string message;
};

/// Parses and checks the body of POST /v1/next_token (`kind` NextToken) or
/// /v1/generate (Generate). False with `error` set when it is refused.
bool parseRequest(JobKind kind, const std::string &body, const Limits &limits,
                  Request &request, RequestError &error);

/// The 200 answer for `request` given the job's result.
std::string answerBody(const Request &request, const JobResult &result);

/// {"error": message}.
std::string errorBody(const std::string &message);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_PROTOCOL_H
