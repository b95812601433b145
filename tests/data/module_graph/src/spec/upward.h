// An include the graph forbids: spec/ may include common/ only.
#pragma once

#include "common/result.h"
#include "store/job_store.h"
