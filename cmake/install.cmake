# Installing loopr like any other tool (`cmake --install build [--prefix ~/.local]`) and the
# Debian package (`tools/package.sh`, or `cpack -G DEB` in the build folder):
#   bin/loopr, bin/loopr-mock-llm
#   share/loopr/example/             the demo's example (`loopr demo` looks beside its binary)
#   share/man/man1/loopr.1.gz        generated from the CLI's own help (src/cli/docgen.hpp)
#   share/man/man1/loopr-mock-llm.1.gz   help2man, when installed
#   share/bash-completion/completions/loopr, share/zsh/<vendor-completions|site-functions>/_loopr
#   share/doc/loopr/                 README.md, docs/ (what it links), copyright, changelog.Debian.gz
include(GNUInstallDirs)

set(LOOPR_DOCS_DIR ${CMAKE_BINARY_DIR}/docs)
file(MAKE_DIRECTORY ${LOOPR_DOCS_DIR})

# The man page and completions: `loopr --generate-docs KIND`, remade whenever loopr is.
set(loopr_docs "")
foreach(kind man bash zsh)
  if(kind STREQUAL "man")
    set(out ${LOOPR_DOCS_DIR}/loopr.1)
    set(outputs ${out} ${out}.gz)
  elseif(kind STREQUAL "bash")
    set(out ${LOOPR_DOCS_DIR}/loopr.bash)
    set(outputs ${out})
  else()
    set(out ${LOOPR_DOCS_DIR}/_loopr)
    set(outputs ${out})
  endif()
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -DLOOPR=$<TARGET_FILE:loopr> -DKIND=${kind} -DOUT=${out}
            -P ${CMAKE_SOURCE_DIR}/cmake/generate_doc.cmake
    DEPENDS loopr ${CMAKE_SOURCE_DIR}/cmake/generate_doc.cmake
    COMMENT "Generating ${out}" VERBATIM)
  list(APPEND loopr_docs ${outputs})
endforeach()

# loopr-mock-llm's man page from its --help (Debian's help2man); skipped without it.
find_program(HELP2MAN help2man)
if(HELP2MAN AND TARGET loopr-mock-llm)
  set(mock_man ${LOOPR_DOCS_DIR}/loopr-mock-llm.1)
  add_custom_command(OUTPUT ${mock_man} ${mock_man}.gz
    COMMAND ${CMAKE_COMMAND} -E env PATH=$<TARGET_FILE_DIR:loopr-mock-llm>:/usr/bin:/bin
            ${HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
            "--name=scripted Anthropic/OpenAI API server for loopr's tests and demo"
            --output=${mock_man} loopr-mock-llm
    COMMAND gzip -9 -n -f -k ${mock_man}
    DEPENDS loopr-mock-llm
    COMMENT "Generating ${mock_man}" VERBATIM)
  list(APPEND loopr_docs ${mock_man} ${mock_man}.gz)
endif()

set(debian_changelog ${LOOPR_DOCS_DIR}/changelog.Debian.gz)
add_custom_command(OUTPUT ${debian_changelog}
  COMMAND sh -c "gzip -9 -n -c \"$0\" > \"$1\"" ${CMAKE_SOURCE_DIR}/cmake/debian/changelog
          ${debian_changelog}
  DEPENDS ${CMAKE_SOURCE_DIR}/cmake/debian/changelog VERBATIM)
list(APPEND loopr_docs ${debian_changelog})

add_custom_target(loopr_docs ALL DEPENDS ${loopr_docs})

set(LOOPR_ZSH_COMPLETION_DIR "" CACHE STRING
    "Where _loopr is installed (relative to the prefix); empty: chosen at install time")
set(LOOPR_BASH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions CACHE STRING
    "Where the bash completion is installed (relative to the prefix)")

install(TARGETS loopr RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET loopr-mock-llm)
  install(TARGETS loopr-mock-llm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The demo's files; the sample artifacts are for loopr's own tests.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/.loopr-example/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/loopr/example
        USE_SOURCE_PERMISSIONS
        PATTERN artifacts EXCLUDE)
install(FILES ${LOOPR_DOCS_DIR}/loopr.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(HELP2MAN AND TARGET loopr-mock-llm)
  install(FILES ${LOOPR_DOCS_DIR}/loopr-mock-llm.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES ${LOOPR_DOCS_DIR}/loopr.bash DESTINATION ${LOOPR_BASH_COMPLETION_DIR}
        RENAME loopr)
if(LOOPR_ZSH_COMPLETION_DIR)
  install(FILES ${LOOPR_DOCS_DIR}/_loopr DESTINATION ${LOOPR_ZSH_COMPLETION_DIR})
else()
  # Debian's zsh reads /usr/share/zsh/vendor-completions; any other prefix (~/.local,
  # /usr/local) site-functions. Decided when installing, so the package (prefix /usr, made by
  # CPack from a build configured for /usr/local) gets the right one.
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(loopr_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions\")
    else()
      set(loopr_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/site-functions\")
    endif()
    file(INSTALL DESTINATION \"\${loopr_zsh_dir}\" TYPE FILE FILES \"${LOOPR_DOCS_DIR}/_loopr\")
  ")
endif()
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/cmake/debian/copyright
              ${debian_changelog}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The README's links: the guide, the configuration reference, the security model, … (docs/).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# ---- the Debian package (CPack). Depends: the shared libraries' packages (dpkg-shlibdeps),
# bubblewrap (the sandbox for commands), git (the demo and your review use the git command).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME loopr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "loopr")
set(CPACK_PACKAGE_CONTACT
    "loopr maintainers <maintainers@users.noreply.a-seed-354c98d4.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "tree of fresh-context LLM loops that turns a request into tested code")
set(CPACK_PACKAGE_DESCRIPTION
    "loopr runs a daemon per git repository that splits a one-line feature
request into a tree of typed loops (plan, spec, phase, code). Every iteration
starts from a fresh model context, works in its own git worktree, and is
checked by a deterministic validation: a format check for documents, the
project's own test command for code. Plans wait for approval in the terminal.

Works with the Anthropic API, OpenAI-compatible servers or the claude CLI.
loopr-mock-llm, a scripted model server, runs the offline demo (loopr demo).")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap, git")
# xdg-utils, sensible-utils: what `loopr web --open` opens the browser with (xdg-open, else
# sensible-browser); without either, `--open` says so after printing the address.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, zsh, xdg-utils, sensible-utils")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
