// The websocket console of /test-websocket.html: pick a method, edit its
// parameters, send, and read the answers and notifications as they come.
(function () {
  'use strict';

  // Methods with example parameters to start from.
  var examples = {
    getInfo: {},
    getBlockHash: { height: 0 },
    getBlock: { id: '0', page: 1, pageSize: 10 },
    getAccountInfo: { descriptor: '', details: 'txids', page: 1, pageSize: 25 },
    getAccountUtxo: { descriptor: '' },
    getTransaction: { txid: '' },
    getTransactionSpecific: { txid: '' },
    getBalanceHistory: { descriptor: '', groupBy: 3600 },
    estimateFee: { blocks: [2, 5, 10] },
    longTermFeeRate: {},
    sendTransaction: { hex: '', disableAlternativeRpc: false },
    getCurrentFiatRates: { currencies: ['usd'] },
    getFiatRatesForTimestamps: { timestamps: [Math.floor(Date.now() / 1000)], currencies: ['usd'] },
    getFiatRatesTickersList: { timestamp: Math.floor(Date.now() / 1000) },
    getMempoolFilters: { scriptType: 'taproot', fromTimestamp: 0 },
    getBlockFilter: { scriptType: 'taproot', blockHash: '' },
    getBlockFiltersBatch: { scriptType: 'taproot', bestKnownBlockHash: '', pageSize: 10 },
    getSilentPaymentTweaks: { height: 0, filterSpent: true, dustLimit: 0 },
    getContractInfo: { contract: '' },
    rpcCall: { from: '', to: '', data: '' },
    ping: {},
    subscribeNewBlock: {},
    unsubscribeNewBlock: {},
    subscribeNewTransaction: {},
    unsubscribeNewTransaction: {},
    subscribeAddresses: { addresses: [], newBlockTxs: false },
    unsubscribeAddresses: {},
    subscribeFiatRates: { currency: 'usd' },
    unsubscribeFiatRates: {}
  };

  var ws = null;
  var nextId = 1;
  var $ = function (id) { return document.getElementById(id); };

  function log(kind, text) {
    var div = document.createElement('div');
    div.className = 'entry ' + kind;
    div.textContent = new Date().toISOString().slice(11, 23) + ' ' + text;
    $('log').prepend(div);
  }

  // The websocket lives next to this page, also under a path prefix.
  function socketURL() {
    var path = location.pathname.replace(/test-websocket\.html$/, '') + 'websocket';
    return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path;
  }

  function setConnected(on, state) {
    $('connect').disabled = on;
    $('disconnect').disabled = !on;
    $('send').disabled = !on;
    $('state').textContent = state;
    document.body.dataset.state = state;
  }

  function connect() {
    var url = socketURL();
    setConnected(true, 'connecting');
    ws = new WebSocket(url);
    ws.onopen = function () { setConnected(true, 'connected'); log('note', 'connected to ' + url); };
    ws.onclose = function (e) { setConnected(false, 'closed'); log('note', 'closed (' + e.code + ')'); ws = null; };
    ws.onerror = function () { log('note', 'websocket error'); };
    ws.onmessage = function (e) {
      var text = e.data;
      try { text = JSON.stringify(JSON.parse(e.data), null, 2); } catch (err) { /* not JSON: show as is */ }
      log('in', '<- ' + text);
    };
  }

  function send() {
    var params;
    try {
      params = JSON.parse($('params').value || '{}');
    } catch (err) {
      log('note', 'params are not JSON: ' + err.message);
      return;
    }
    var msg = JSON.stringify({ id: String(nextId++), method: $('method').value, params: params });
    log('out', '-> ' + msg);
    ws.send(msg);
  }

  function showExample() {
    $('params').value = JSON.stringify(examples[$('method').value] || {}, null, 2);
  }

  Object.keys(examples).forEach(function (m) {
    var o = document.createElement('option');
    o.value = o.textContent = m;
    $('method').appendChild(o);
  });
  $('method').addEventListener('change', showExample);
  $('connect').addEventListener('click', connect);
  $('disconnect').addEventListener('click', function () { if (ws) { ws.close(); } });
  $('send').addEventListener('click', send);
  $('clear').addEventListener('click', function () { $('log').textContent = ''; });
  showExample();
  connect();
}());
