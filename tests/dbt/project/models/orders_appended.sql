-- Incremental, append: the first run loads batch 1, every later run appends batch 2.
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    partition_by=['order_date']
) }}

select order_id, customer_id, amount, status, order_date
from {{ ref('orders') }}
{% if is_incremental() %}
where batch = 2
{% else %}
where batch = 1
{% endif %}
