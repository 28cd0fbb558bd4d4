// Anchors the precompiled header every test reuses (tests/CMakeLists.txt).
