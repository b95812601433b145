# The module graph, written down once: every module under src/, lowest first, and the
# modules whose headers its files may include (besides its own, the C++ library and the
# third-party libraries). cmake/check_module_graph.cmake holds every `#include "<module>/…"`
# line under src/ to this table; an include outside it, a directory under src/ that is not
# listed, or a module allowed to include one listed after it (a cycle, or an upward include)
# fails the build (target module_graph) and ctest (layout.module_graph). The README's
# layout section says the same in words.
set(TP_MODULES
  common     # Result/Error, clock, file input, HS256 JWT, numbers for people
  spec       # the job spec model and its parser (pure)
  catalog    # site file, runtime registry, artifact verification
  launch     # assembly: spec + catalog → LaunchRequest (pure); attempt identity
  http       # the libcurl HTTP transport (Slurm client and API client alike)
  phase      # the phase and end-cause vocabulary of jobs and attempts
  slurm      # batch script, submit body, the slurmrestd client, Slurm's state vocabulary
  staging    # one immutable directory per attempt; who may write it
  store      # durable state behind JobStore (SQLite or PostgreSQL), the leader lease
  attempt    # readers of an attempt's files: log tail, sentinels, staged files
  pipeline   # spec → staged attempt (the launch pipeline), the attempt launcher
  control    # the reconciler: loop, state machine, status mapping, decisions, retry policy
  doctor     # `tuneplane doctor`'s checks and their gathering layer
  siteinit   # `tuneplane site init`'s drafting: a site file from nodes and partitions (pure)
  api        # the /v1 HTTP surface of `tuneplane serve`
  server     # the wiring of `tuneplane serve`: store, Slurm client, loop, API
  client     # the /v1 API client: config, HTTP, typed objects, polling
  client_cli # the `tuneplane` verbs that talk to serve, through client/ only
  cli        # the `tuneplane` command: main, offline and operator commands, serve
  sim        # tuneplane-slurmsim, the slurmrestd simulator
)
set(TP_ALLOWED_common "")
set(TP_ALLOWED_spec common)
set(TP_ALLOWED_catalog common spec)
set(TP_ALLOWED_launch common spec catalog)
set(TP_ALLOWED_http common)
set(TP_ALLOWED_phase "")
set(TP_ALLOWED_slurm common catalog launch http)
set(TP_ALLOWED_staging common catalog launch)
set(TP_ALLOWED_store common phase)
set(TP_ALLOWED_attempt common spec slurm staging)
set(TP_ALLOWED_pipeline common spec catalog launch slurm staging store attempt)
set(TP_ALLOWED_control common spec catalog launch phase slurm staging store attempt pipeline)
set(TP_ALLOWED_doctor common catalog slurm staging phase store)
set(TP_ALLOWED_siteinit common slurm doctor)
set(TP_ALLOWED_api common spec catalog launch phase slurm staging store attempt pipeline control)
set(TP_ALLOWED_server common catalog launch http slurm staging store pipeline control doctor api)
set(TP_ALLOWED_client common spec http phase)
set(TP_ALLOWED_client_cli common spec client)
set(TP_ALLOWED_cli common spec catalog launch slurm staging store pipeline control doctor api
  server client client_cli siteinit)
set(TP_ALLOWED_sim common)

# Fails the configuration when `target` links, directly or through any library it links,
# one of the targets named after it (what a module must never drag in: the client verbs
# and SQLite). The include rules say what its code sees; this, what its binary carries.
function(tp_forbid_links target)
  set(queue ${target})
  set(seen "")
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    if(current IN_LIST ARGN)
      message(FATAL_ERROR "${target} links ${current}, which it must not (cmake/module_graph.cmake)")
    endif()
    get_target_property(direct ${current} LINK_LIBRARIES)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(library IN LISTS direct interface)
      if(library AND NOT library MATCHES "-NOTFOUND$")
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" library "${library}")
        list(APPEND queue ${library})
      endif()
    endforeach()
  endwhile()
endfunction()
