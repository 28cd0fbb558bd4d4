-- wrk script: N pipelined `GET /` requests per write (default 16).
--   wrk -t1 -c64 -d5s -s bench/serve_wrk.lua http://127.0.0.1:PORT/ -- 16
local depth = 16
local req

init = function(args)
  depth = tonumber(args[1] or depth)
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format("GET", "/")
  end
  req = table.concat(r)
end

request = function()
  return req
end
