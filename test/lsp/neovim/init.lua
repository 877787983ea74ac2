-- A minimal Neovim configuration that runs the Context Lens language server for .prompt and
-- .prompty buffers, used headless by test/lsp/neovim.test.ts ("Other editors" in docs/editor.md
-- shows the same setup for everyday use). Works with Neovim 0.7 (Debian 12) and newer: vim.lsp.start where it exists,
-- vim.lsp.start_client + buf_attach_client before that.
--
-- Environment:
--   CTXLENS_NODE        node binary (default: node)
--   CTXLENS_SERVER      path of dist/server.js
--   CTXLENS_ROOT        workspace root the server scans
--   CTXLENS_NVIM_OUT    when set, wait for diagnostics of the first buffer, write a JSON report there, quit
--   CTXLENS_NVIM_WAIT_RULE  rule id whose diagnostic ends the wait (default: slot-undefined)
--   CTXLENS_NVIM_TIMEOUT_MS bound of every wait (default: 30000)
local node = os.getenv('CTXLENS_NODE') or 'node'
local server = assert(os.getenv('CTXLENS_SERVER'), 'CTXLENS_SERVER is not set')
local root = os.getenv('CTXLENS_ROOT') or vim.fn.getcwd()
local timeout = tonumber(os.getenv('CTXLENS_NVIM_TIMEOUT_MS') or '30000')

vim.cmd([[
  augroup contextlens_filetypes
    autocmd!
    autocmd BufRead,BufNewFile *.prompt set filetype=dotprompt
    autocmd BufRead,BufNewFile *.prompty set filetype=prompty
  augroup END
]])

local config = {
  name = 'context-lens',
  cmd = { node, server, '--stdio' },
  root_dir = root,
}

local function start(bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  -- Neovim 0.7: one client for every buffer of the root.
  if not _G.contextlens_client then
    _G.contextlens_client = vim.lsp.start_client(config)
  end
  vim.lsp.buf_attach_client(bufnr, _G.contextlens_client)
  return _G.contextlens_client
end

vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'dotprompt', 'prompty' },
  callback = function(args)
    start(args.buf)
  end,
})

local out = os.getenv('CTXLENS_NVIM_OUT')
if not out then
  return
end

local function code_of(d)
  if d.code ~= nil then
    return d.code
  end
  return d.user_data and d.user_data.lsp and d.user_data.lsp.code or vim.NIL
end

local function report()
  local bufnr = vim.fn.bufnr(1)
  local wait_rule = os.getenv('CTXLENS_NVIM_WAIT_RULE') or 'slot-undefined'
  local t0 = vim.loop.now()
  local attached = vim.wait(timeout, function()
    return #vim.lsp.get_active_clients() > 0 and next(vim.lsp.buf_get_clients(bufnr)) ~= nil
  end, 50)
  local found = vim.wait(timeout, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if code_of(d) == wait_rule then
        return true
      end
    end
    return false
  end, 100)
  local diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(diagnostics, {
      lnum = d.lnum,
      col = d.col,
      severity = d.severity,
      source = d.source or vim.NIL,
      code = code_of(d),
      message = d.message,
    })
  end
  -- Requests through the same client: code lenses and a hover on the first slot use.
  local uri = vim.uri_from_bufnr(bufnr)
  local lenses = {}
  local lens_results = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeLens', { textDocument = { uri = uri } }, timeout) or {}
  for _, r in pairs(lens_results) do
    for _, l in ipairs(r.result or {}) do
      if l.command then
        table.insert(lenses, { line = l.range.start.line, title = l.command.title, command = l.command.command })
      end
    end
  end
  local hover = vim.NIL
  local hover_at = os.getenv('CTXLENS_NVIM_HOVER')
  if hover_at then
    local line, col = hover_at:match('^(%d+):(%d+)$')
    local results = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', {
      textDocument = { uri = uri },
      position = { line = tonumber(line), character = tonumber(col) },
    }, timeout) or {}
    for _, r in pairs(results) do
      if r.result and r.result.contents then
        hover = type(r.result.contents) == 'table' and (r.result.contents.value or vim.fn.json_encode(r.result.contents)) or r.result.contents
      end
    end
  end
  local clients = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do
    table.insert(clients, { name = c.name, server = c.server_capabilities and c.server_capabilities.hoverProvider and 'hover' or vim.NIL })
  end
  local v = vim.version()
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode({
    nvim = string.format('%d.%d.%d', v.major, v.minor, v.patch),
    filetype = vim.bo[bufnr].filetype,
    attached = attached,
    found = found,
    waited_ms = vim.loop.now() - t0,
    clients = clients,
    diagnostics = diagnostics,
    lenses = lenses,
    hover = hover,
  }))
  f:close()
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    local ok, err = pcall(report)
    if not ok then
      local f = io.open(out, 'w')
      if f then
        f:write(vim.fn.json_encode({ error = tostring(err) }))
        f:close()
      end
    end
    vim.cmd('qall!')
  end,
})
